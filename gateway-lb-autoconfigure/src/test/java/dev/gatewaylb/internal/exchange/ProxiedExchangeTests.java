package dev.gatewaylb.internal.exchange;

import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.affinity.AffinityOutcome;
import dev.gatewaylb.internal.affinity.AffinityState;
import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.upstream.Outcome;
import io.netty.handler.timeout.ReadTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.netty.channel.AbortedException;
import reactor.netty.internal.shaded.reactor.pool.PoolAcquirePendingLimitException;
import reactor.netty.internal.shaded.reactor.pool.PoolShutdownException;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attempt loop of one exchange, pick to answer, driven step by step without sockets:
 * what the owner does after each thing an upstream can do, with the service's built-in
 * defaults ({@code retry.attempts: 1}, {@code timeouts.response: 30s}, round-robin over
 * a, b, c).
 */
class ProxiedExchangeTests {

	private final ScriptedExchanges service = new ScriptedExchanges(Map.of(), "a", "b", "c");

	@AfterEach
	void nothingStaysInFlight() {
		assertThat(this.service.inFlight()).isZero();
		this.service.close();
	}

	@Test
	void sendsOnceAndPassesTheAnswerOn() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		assertThat(run.sends).hasSize(1);
		run.send(0).sent().answers(200);
		assertThat(run.completed).isTrue();
		assertThat(run.status()).isEqualTo(200);
		// The endpoint is busy until its body arrived, not until the client has it.
		assertThat(this.service.inFlight()).isEqualTo(1);
		run.send(0).completes();
		assertThat(this.service.inFlight()).isZero();
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.SUCCESS);
		run.end();
	}

	@Test
	void retriesAConnectFailureOnAnotherEndpoint() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.POST);
		run.send(0).fails(new ConnectException("refused"));
		assertThat(run.sends).hasSize(2);
		run.send(1).sent().answers(200);
		run.send(1).completes();
		assertThat(run.endpoints()).doesNotHaveDuplicates();
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.CONNECT_FAILED);
		assertThat(this.service.runtime.counters().retried().sum()).isEqualTo(1);
		run.end();
	}

	@Test
	void answers502WhenTheRetryFailsToConnectToo() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).fails(new ConnectException("refused"));
		run.send(1).fails(new ConnectException("refused"));
		assertThat(run.sends).hasSize(2);
		assertThat(run.completed).isTrue();
		assertThat(run.status()).isEqualTo(502);
		assertThat(run.body()).isEqualTo("{\"status\":502,\"error\":\"upstream connect failed\",\"service\":\"svc\"}");
		run.end();
	}

	@Test
	void aRepickAfterAClosingPoolSpendsNoRetry() {
		// The pool closed under the request (its endpoint left, or a refresh replaced
		// the pools): nothing left the gateway, so the default one retry is still there.
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).fails(new PoolShutdownException());
		assertThat(run.sends).hasSize(2);
		run.send(1).fails(new ConnectException("refused"));
		assertThat(run.sends).as("the retry after the re-pick").hasSize(3);
		run.send(2).sent().answers(200);
		run.send(2).completes();
		assertThat(run.status()).isEqualTo(200);
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.SATURATED);
		assertThat(this.service.runtime.counters().retried().sum()).isEqualTo(1);
		assertThat(this.service.runtime.counters().saturated().sum()).isZero();
		run.end();
	}

	@Test
	void repicksAtMostFourTimesThenAnswers503() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		for (int i = 0; i <= ProxiedExchange.MAX_REPICKS; i++) {
			run.send(i).fails(new PoolShutdownException());
		}
		assertThat(run.sends).hasSize(ProxiedExchange.MAX_REPICKS + 1);
		assertThat(run.status()).isEqualTo(503);
		assertThat(run.body()).contains("\"error\":\"upstream saturated\"");
		run.end();
	}

	@Test
	void aFullPendingQueueIsAnsweredAtOnceAndNotRetried() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).fails(new PoolAcquirePendingLimitException(256));
		assertThat(run.sends).hasSize(1);
		assertThat(run.status()).isEqualTo(503);
		assertThat(this.service.runtime.counters().saturated().sum()).isEqualTo(1);
		assertThat(this.service.snapshot().state(0).consecutiveFailures()).isZero();
		run.end();
	}

	@Test
	void retriesA503OfAGetAndChargesTheEndpointThatAnsweredIt() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent().answers(503);
		assertThat(run.sends).hasSize(2);
		run.send(1).sent().answers(200);
		run.send(1).completes();
		assertThat(run.status()).isEqualTo(200);
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.SERVER_ERROR);
		assertThat(run.send(0).attempt.isReleased()).isTrue();
		assertThat(run.send(0).attempt.endpoint().consecutiveFailures()).isEqualTo(1);
		run.end();
	}

	@Test
	void passesA503OfAPostOnAsItIs() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.POST);
		run.send(0).sent().answers(503);
		assertThat(run.sends).hasSize(1);
		assertThat(run.status()).isEqualTo(503);
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.SERVER_ERROR);
		run.send(0).completes();
		run.end();
	}

	@Test
	void answers504ToAHeaderTimeoutWithoutRetrying() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent().fails(ReadTimeoutException.INSTANCE);
		assertThat(run.sends).hasSize(1);
		assertThat(run.status()).isEqualTo(504);
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.TIMEOUT);
		run.end();
	}

	@Test
	void retriesOnlyWhileTheDeadlineOfTheFirstSendHasTimeLeft() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent();
		this.service.elapse(30_000_000_000L - Deadline.MIN_ATTEMPT_NANOS + 1);
		run.send(0).answers(503);
		assertThat(run.sends).hasSize(1);
		assertThat(run.status()).isEqualTo(503);
		run.send(0).completes();
		run.end();
	}

	@Test
	void givesTheRetryWhatIsLeftOfTheFirstSendsDeadline() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent();
		this.service.elapse(12_000_000_000L);
		run.send(0).answers(503);
		run.send(0).completes();
		assertThat(run.send(1).attempt.requestPrepared(this.service.loop.eventLoop())).hasSeconds(18);
		run.send(1).answers(200);
		run.send(1).completes();
		run.end();
	}

	@Test
	void anErrorThatIsNotTheUpstreamsPassesOnAndChargesNobody() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		IllegalStateException bug = new IllegalStateException("a filter's own bug");
		run.send(0).fails(bug);
		assertThat(run.error.get()).isSameAs(bug);
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.NOT_UPSTREAM);
		assertThat(this.service.snapshot().state(0).consecutiveFailures()).isZero();
		run.end();
	}

	@Test
	void aChainRunAgainByARoutesRetryFilterReachesTheSameOwnerAndPicksAnEndpointNotTriedYet() {
		ScriptedExchanges.Run run = this.service.startThroughTheFilter(HttpMethod.GET);
		run.send(0).sent().answers(500);
		assertThat(run.completed).isTrue();
		// 500 is not in retry.on-statuses: the route's own Retry filter runs the chain
		// again, from where it sits, through the attempt filter.
		run.completed = false;
		this.service.filterAgain(run);
		assertThat(run.sends).hasSize(2);
		assertThat(run.send(0).attempt.isReleased()).isTrue();
		assertThat(run.endpoints()).doesNotHaveDuplicates();
		run.send(1).sent().answers(200);
		run.send(1).completes();
		assertThat(run.completed).isTrue();
		run.send(0).completes();
		run.end();
	}

	@Test
	void theClientGoingAwayEndsTheAttemptChargingNobody() {
		ScriptedExchanges.Run run = this.service.start(HttpMethod.GET);
		run.send(0).sent();
		run.cancel();
		assertThat(run.send(0).attempt.isReleased()).isTrue();
		run.send(0).attempt.responseFailed(new java.io.IOException("connection reset"));
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.CLIENT_GONE);
		assertThat(this.service.snapshot().state(0).consecutiveFailures()).isZero();
	}

	@Test
	void aRetryAvoidsEveryEndpointTriedWhileOneIsLeft() {
		ScriptedExchanges service = new ScriptedExchanges(Map.of("gateway.lb.defaults.retry.attempts", "3"), "a", "b",
				"c");
		try {
			ScriptedExchanges.Run run = service.start(HttpMethod.GET);
			run.send(0).fails(new ConnectException("refused"));
			run.send(1).fails(new ConnectException("refused"));
			run.send(2).fails(new ConnectException("refused"));
			// Every endpoint tried: the last retry takes the balancer's own pick.
			run.send(3).fails(new ConnectException("refused"));
			assertThat(run.endpoints().subList(0, 3)).containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2", "10.0.0.3");
			assertThat(run.sends).hasSize(4);
			assertThat(run.status()).isEqualTo(502);
			run.end();
			assertThat(service.inFlight()).isZero();
		}
		finally {
			service.close();
		}
	}

	@Test
	void aFailureBeforeTheHeadersThatReachesTheOwnerOnceTheClientHasGoneChargesNobody() {
		// A client hangs up in the middle of its upload. The release filter notes it gone
		// as the cancellation goes up the chain, on the client's event loop; the
		// upstream's
		// failure, already emitted on the upstream connection's event loop, still reaches
		// the owner (a cancellation does not stop an error already on its way through
		// onErrorResume). Before the headers, Reactor Netty tells no client callback
		// (doOnResponseError wants a response), so the owner's decision is the only one.
		ScriptedExchanges.Run run = this.service.start(HttpMethod.POST, HttpHeaders.TRANSFER_ENCODING, "chunked");
		run.send(0).attempt.requestPrepared(this.service.loop.eventLoop());
		run.lease.clientGone();
		run.send(0).fails(new AbortedException("Connection has been closed"));
		assertThat(run.send(0).attempt.outcome()).isEqualTo(Outcome.Kind.CLIENT_GONE);
		assertThat(run.send(0).attempt.endpoint().consecutiveFailures()).as("charged to the endpoint").isZero();
		assertThat(run.sends).as("sent once").hasSize(1);
		run.end();
	}

	@Test
	void aRepickAfterAClosingPoolFollowsTheSessionsCookieAgain() {
		String secret = "the affinity secret, 32 bytes or more";
		ScriptedExchanges service = new ScriptedExchanges(
				Map.of("gateway.lb.defaults.affinity.cookie", "GWLB_EP", "gateway.lb.defaults.affinity.secret", secret),
				"a", "b", "c");
		try {
			Snapshot<Member> snapshot = service.snapshot();
			int b = 0;
			while (!snapshot.endpoint(b).address().startsWith("10.0.0.2:")) {
				b++;
			}
			String cookie = new EndpointCookie("svc", secret.getBytes(StandardCharsets.UTF_8), List.of(), 86_400,
					() -> service.fixture.control.requestClock().currentTimeMillis() / 1000)
				.sign(snapshot.id(b));
			ScriptedExchanges.Run run = service.start(HttpMethod.GET, HttpHeaders.COOKIE, "GWLB_EP=" + cookie);
			assertThat(run.endpoints()).containsExactly("10.0.0.2");
			// b's pool closed as the request took it (a refresh replaced the pools): b is
			// healthy and still a member, and the session stays there.
			run.send(0).fails(new PoolShutdownException());
			assertThat(run.endpoints()).containsExactly("10.0.0.2", "10.0.0.2");
			run.send(1).sent().answers(200);
			run.send(1).completes();
			assertThat(run.exchange.getResponse().getCookies()).as("a followed session gets no new cookie").isEmpty();
			assertThat(service.runtime.feature(AffinityState.class).outcome(AffinityOutcome.FOLLOWED).sum())
				.isEqualTo(1);
			assertThat(service.runtime.feature(AffinityState.class).outcome(AffinityOutcome.MOVED).sum()).isZero();
			run.end();
			assertThat(service.inFlight()).isZero();
		}
		finally {
			service.close();
		}
	}

	@Test
	void slowRequestsThatFollowedAnAffinityCookieCannotEjectTheirEndpoint() {
		String secret = "the affinity secret, 32 bytes or more";
		ScriptedExchanges service = new ScriptedExchanges(
				Map.of("gateway.lb.defaults.affinity.cookie", "GWLB_EP", "gateway.lb.defaults.affinity.secret", secret,
						"gateway.lb.defaults.health.passive.latency-factor", "3"),
				"a", "b", "c");
		try {
			Snapshot<Member> snapshot = service.snapshot();
			int b = 0;
			while (!snapshot.endpoint(b).address().startsWith("10.0.0.2:")) {
				b++;
			}
			EndpointState endpoint = snapshot.state(b);
			// Everyone, without a cookie: 20 ms everywhere, 25 samples per endpoint.
			for (int i = 0; i < 75; i++) {
				exchange(service, service.start(HttpMethod.GET), Duration.ofMillis(20));
			}
			assertThat(endpoint.ejectionSamples()).isEqualTo(25);
			// One client with b's cookie: 30 requests that take 200 ms, all to b.
			String cookie = new EndpointCookie("svc", secret.getBytes(StandardCharsets.UTF_8), List.of(), 86_400,
					() -> service.fixture.control.requestClock().currentTimeMillis() / 1000)
				.sign(snapshot.id(b));
			for (int i = 0; i < 30; i++) {
				ScriptedExchanges.Run run = service.start(HttpMethod.GET, HttpHeaders.COOKIE, "GWLB_EP=" + cookie);
				assertThat(run.endpoints()).containsExactly("10.0.0.2");
				assertThat(run.send(0).attempt.followed()).isTrue();
				exchange(service, run, Duration.ofMillis(200));
			}
			service.fixture.advance(Duration.ofSeconds(2));
			assertThat(endpoint.ejectionSamples()).as("no ejection sample from a followed request").isEqualTo(25);
			assertThat(endpoint.latencySamples()).as("still a latency sample (peak EWMA, locality spill)")
				.isEqualTo(55);
			assertThat(endpoint.isEjected(service.fixture.clock.get())).isFalse();
			assertThat(endpoint.ejections()).isZero();
		}
		finally {
			service.close();
		}
	}

	private static void exchange(ScriptedExchanges service, ScriptedExchanges.Run run, Duration latency) {
		run.send(0).sent();
		service.fixture.advance(latency);
		run.send(0).answers(200);
		run.send(0).completes();
		run.end();
	}

}
