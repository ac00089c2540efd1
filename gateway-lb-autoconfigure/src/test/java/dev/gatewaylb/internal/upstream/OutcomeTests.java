package dev.gatewaylb.internal.upstream;

import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.channels.NotYetConnectedException;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import javax.net.ssl.SSLHandshakeException;

import dev.gatewaylb.internal.upstream.Outcome.Charge;
import dev.gatewaylb.internal.upstream.Outcome.Kind;
import dev.gatewaylb.internal.upstream.Outcome.Phase;
import dev.gatewaylb.internal.health.FailureStatuses;
import dev.gatewaylb.internal.health.OutlierDetection;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshakeException;
import io.netty.handler.timeout.ReadTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.netty.channel.AbortedException;
import reactor.netty.http.client.PrematureCloseException;
import reactor.netty.internal.shaded.reactor.pool.PoolAcquirePendingLimitException;
import reactor.netty.internal.shaded.reactor.pool.PoolAcquireTimeoutException;
import reactor.netty.internal.shaded.reactor.pool.PoolShutdownException;

import org.springframework.http.HttpStatus;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attribution table: which error, at which phase of an attempt, is whose doing.
 */
class OutcomeTests {

	static Stream<Arguments> errors() {
		return Stream.of(
				// No connection yet: a refusal of our own pool is nobody's doing; a
				// connection that could not be opened is the endpoint's.
				Arguments.of(Phase.CONNECTING, new PoolAcquirePendingLimitException(256), Kind.SATURATED),
				Arguments.of(Phase.CONNECTING, new PoolAcquireTimeoutException(java.time.Duration.ofSeconds(5)),
						Kind.SATURATED),
				Arguments.of(Phase.CONNECTING, new PoolShutdownException(), Kind.SATURATED),
				Arguments.of(Phase.CONNECTING, new ConnectException("Connection refused"), Kind.CONNECT_FAILED),
				Arguments.of(Phase.CONNECTING, new ConnectTimeoutException("connection timed out"),
						Kind.CONNECT_FAILED),
				Arguments.of(Phase.CONNECTING, new UnknownHostException("nowhere"), Kind.CONNECT_FAILED),
				Arguments.of(Phase.CONNECTING, new SSLHandshakeException("untrusted"), Kind.CONNECT_FAILED),
				Arguments.of(Phase.CONNECTING, new NotYetConnectedException(), Kind.CONNECT_FAILED),
				Arguments.of(Phase.CONNECTING, new IllegalStateException("a bug"), Kind.NOT_UPSTREAM),
				// The request started: a broken connection may have reached the endpoint.
				Arguments.of(Phase.SENDING, new AbortedException("Connection has been closed BEFORE send operation"),
						Kind.CONNECTION_LOST),
				Arguments.of(Phase.SENDING, new IOException("Connection reset by peer"), Kind.CONNECTION_LOST),
				Arguments.of(Phase.AWAITING_HEADERS, ReadTimeoutException.INSTANCE, Kind.TIMEOUT),
				Arguments.of(Phase.AWAITING_HEADERS, PrematureCloseException.TEST_EXCEPTION, Kind.CONNECTION_LOST),
				Arguments.of(Phase.AWAITING_HEADERS, new RuntimeException(new IOException("reset")),
						Kind.CONNECTION_LOST),
				// ENOTCONN from a native transport's read: an IllegalStateException, yet
				// the
				// socket's.
				Arguments.of(Phase.AWAITING_HEADERS, new NotYetConnectedException(), Kind.CONNECTION_LOST),
				// A WebSocket handshake that broke off, or whose answer is no handshake.
				Arguments.of(Phase.AWAITING_HEADERS,
						new WebSocketClientHandshakeException(
								"Connection prematurely closed BEFORE opening handshake is complete."),
						Kind.CONNECTION_LOST),
				Arguments.of(Phase.AWAITING_HEADERS,
						new WebSocketClientHandshakeException("Invalid handshake response upgrade: null"),
						Kind.CONNECTION_LOST),
				Arguments.of(Phase.SENDING, new NotYetConnectedException(), Kind.CONNECTION_LOST),
				Arguments.of(Phase.RECEIVING, new NotYetConnectedException(), Kind.BODY_FAILED),
				Arguments.of(Phase.AWAITING_HEADERS, new IllegalArgumentException("a filter's bug"), Kind.NOT_UPSTREAM),
				// The headers went out: a body that breaks off or stalls.
				Arguments.of(Phase.RECEIVING, ReadTimeoutException.INSTANCE, Kind.BODY_FAILED),
				Arguments.of(Phase.RECEIVING, PrematureCloseException.TEST_EXCEPTION, Kind.BODY_FAILED),
				Arguments.of(Phase.RECEIVING, new IllegalStateException("a bug"), Kind.NOT_UPSTREAM),
				// The client's silence, at whatever phase and however Reactor Netty wraps
				// it:
				// never the endpoint's failure, though it is a timeout that broke a send.
				Arguments.of(Phase.SENDING, new RequestBodyIdleException(Duration.ofSeconds(1)),
						Kind.REQUEST_BODY_IDLE),
				Arguments.of(Phase.SENDING, new RuntimeException(new RequestBodyIdleException(Duration.ofSeconds(1))),
						Kind.REQUEST_BODY_IDLE),
				Arguments.of(Phase.AWAITING_HEADERS, new RequestBodyIdleException(Duration.ofSeconds(1)),
						Kind.REQUEST_BODY_IDLE),
				Arguments.of(Phase.RECEIVING, new RequestBodyIdleException(Duration.ofSeconds(1)),
						Kind.REQUEST_BODY_IDLE));
	}

	@ParameterizedTest(name = "{0} {1} -> {2}")
	@MethodSource("errors")
	void classifiesAnErrorByWhatItIsAndHowFarTheAttemptGot(Phase phase, Throwable error, Kind expected) {
		assertThat(Outcome.classify(phase, error)).isEqualTo(expected);
	}

	@Test
	void chargesTheEndpointForWhatItDidAndNobodyForWhatTheClientOrTheGatewayDid() {
		assertThat(Kind.SUCCESS.charge()).isEqualTo(Charge.SUCCESS);
		Stream.of(Kind.SERVER_ERROR, Kind.CONNECT_FAILED, Kind.CONNECTION_LOST, Kind.TIMEOUT, Kind.BODY_FAILED)
			.forEach((kind) -> assertThat(kind.charge()).as("%s", kind).isEqualTo(Charge.FAILURE));
		Stream.of(Kind.SATURATED, Kind.REQUEST_BODY_IDLE, Kind.CLIENT_GONE, Kind.CANCELLED, Kind.NOT_UPSTREAM)
			.forEach((kind) -> assertThat(kind.charge()).as("%s", kind).isEqualTo(Charge.NOBODY));
	}

	@Test
	void answersWhatTheGatewayAnswersItself() {
		assertThat(Kind.CONNECT_FAILED.status()).isEqualTo(HttpStatus.BAD_GATEWAY);
		assertThat(Kind.CONNECT_FAILED.error()).isEqualTo("upstream connect failed");
		assertThat(Kind.CONNECTION_LOST.status()).isEqualTo(HttpStatus.BAD_GATEWAY);
		assertThat(Kind.CONNECTION_LOST.error()).isEqualTo("upstream connection failed");
		assertThat(Kind.TIMEOUT.status()).isEqualTo(HttpStatus.GATEWAY_TIMEOUT);
		assertThat(Kind.SATURATED.status()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
		assertThat(Kind.SATURATED.error()).isEqualTo("upstream saturated");
		assertThat(Kind.REQUEST_BODY_IDLE.status()).isEqualTo(HttpStatus.REQUEST_TIMEOUT);
		assertThat(Kind.REQUEST_BODY_IDLE.error()).isEqualTo("request body timeout");
		assertThat(Kind.SERVER_ERROR.status()).as("the endpoint's own answer passes on").isNull();
	}

	@Test
	void saysWhetherTheRequestMayHaveReachedTheEndpoint() {
		assertThat(Kind.CONNECT_FAILED.mayHaveReached()).isFalse();
		assertThat(Kind.SATURATED.mayHaveReached()).isFalse();
		assertThat(Kind.CONNECTION_LOST.mayHaveReached()).isTrue();
		assertThat(Kind.SERVER_ERROR.mayHaveReached()).isTrue();
	}

	@Test
	void classifiesAStatusByWhetherPassiveHealthCountsIt() {
		assertThat(Outcome.ofStatus(503, true)).isEqualTo(Kind.SERVER_ERROR);
		assertThat(Outcome.ofStatus(404, false)).isEqualTo(Kind.SUCCESS);
	}

	@Test
	void chargesA5xxThatPassiveHealthDoesNotCountAsASuccessThatEndsTheStreak() {
		// health.passive.on-statuses: [502, 503, 504], Envoy's gateway failures: an
		// application's 500 is an answer, and resets the streak as in Envoy.
		OutlierDetection gatewayFailures = new OutlierDetection(5, 1, 50, FailureStatuses.of(List.of(502, 503, 504)));
		assertThat(Outcome.ofStatus(500, gatewayFailures.countsAsFailure(500)).charge()).isEqualTo(Charge.SUCCESS);
		assertThat(Outcome.ofStatus(503, gatewayFailures.countsAsFailure(503)).charge()).isEqualTo(Charge.FAILURE);
		OutlierDetection every5xx = new OutlierDetection(5, 1, 50);
		assertThat(Outcome.ofStatus(500, every5xx.countsAsFailure(500)).charge()).isEqualTo(Charge.FAILURE);
	}

}
