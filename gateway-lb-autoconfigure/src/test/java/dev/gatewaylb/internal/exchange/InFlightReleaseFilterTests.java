package dev.gatewaylb.internal.exchange;

import java.util.concurrent.atomic.AtomicReference;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.upstream.Outcome;
import dev.gatewaylb.gateway.filter.InFlightReleaseFilter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.PrematureCloseException;

import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the exchange's end does to its lease and its attempt, whatever the transport does
 * underneath: a client that goes away is noted before anything reaches the upstream, so
 * an error the cut then raises is charged to nobody.
 */
class InFlightReleaseFilterTests {

	private final TwoEndpoints service = new TwoEndpoints();

	private final Snapshot<Member> snapshot = this.service.snapshot;

	@AfterEach
	void stop() {
		this.service.close();
	}

	@Test
	void notesTheClientGoneAndReleasesTheAttemptWhenTheExchangeIsCancelled() {
		MockServerWebExchange exchange = lbExchange();
		AtomicReference<Attempt> attempt = new AtomicReference<>();
		Disposable subscription = new InFlightReleaseFilter().filter(exchange, (chained) -> {
			ExchangeLease lease = chained.getAttribute(ExchangeLease.ATTRIBUTE);
			attempt.set(this.service.attempt(lease, 0));
			lease.hold(attempt.get());
			return Mono.never();
		}).subscribe();
		assertThat(this.snapshot.state(0).inFlight()).isEqualTo(1);

		subscription.dispose();

		ExchangeLease lease = exchange.getAttribute(ExchangeLease.ATTRIBUTE);
		assertThat(lease.isClientGone()).isTrue();
		assertThat(attempt.get().isReleased()).isTrue();
		assertThat(this.snapshot.state(0).inFlight()).isZero();
		// What the cut connection reports afterwards is nobody's doing.
		attempt.get().responseReceived(200);
		attempt.get().responseFailed(PrematureCloseException.TEST_EXCEPTION);
		assertThat(attempt.get().outcome()).isEqualTo(Outcome.Kind.CLIENT_GONE);
		assertThat(this.snapshot.state(0).consecutiveFailures()).isZero();
	}

	@Test
	void chargesABodyThatBreaksOffWhileTheClientIsThere() {
		ExchangeLease lease = new ExchangeLease();
		Attempt attempt = this.service.attempt(lease, 1);
		lease.hold(attempt);
		attempt.responseReceived(200);
		attempt.responseFailed(PrematureCloseException.TEST_EXCEPTION);
		assertThat(attempt.outcome()).isEqualTo(Outcome.Kind.BODY_FAILED);
		assertThat(this.snapshot.state(1).consecutiveFailures()).isEqualTo(1);
		lease.close();
	}

	@Test
	void settlesAnAttemptOnceWhateverReportsIt() {
		ExchangeLease lease = new ExchangeLease();
		Attempt attempt = this.service.attempt(lease, 1);
		lease.hold(attempt);
		attempt.responseReceived(503);
		assertThat(attempt.answered(503)).isEqualTo(Outcome.Kind.SERVER_ERROR);
		// The connection the gateway closes for a retry reports a failure; and a body
		// might still complete: neither counts again.
		attempt.responseFailed(PrematureCloseException.TEST_EXCEPTION);
		attempt.responseCompleted();
		assertThat(attempt.outcome()).isEqualTo(Outcome.Kind.SERVER_ERROR);
		assertThat(this.snapshot.state(1).consecutiveFailures()).isEqualTo(1);
		lease.close();
	}

	@Test
	void passesOtherRoutesThrough() {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/x"));
		exchange.getAttributes()
			.put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR,
					Route.async().id("plain").uri("http://example.org").predicate((e) -> true).build());
		new InFlightReleaseFilter().filter(exchange, (chained) -> Mono.empty()).block();
		assertThat((Object) exchange.getAttribute(ExchangeLease.ATTRIBUTE)).isNull();
	}

	private static MockServerWebExchange lbExchange() {
		MockServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.get("/svc/x"));
		exchange.getAttributes()
			.put(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR,
					Route.async().id("svc").uri("lb://svc").predicate((e) -> true).build());
		return exchange;
	}

}
