package dev.gatewaylb.internal.exchange;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.overload.core.LimitSamples;
import dev.gatewaylb.internal.overload.OverloadState;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import io.netty.handler.timeout.ReadTimeoutException;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The attempt loop of a service with concurrency limits, driven step by step: what is
 * shed, how it is answered, what each outcome gives the endpoints' limiters.
 */
class ConcurrencyLimitExchangeTests {

	private static final Map<String, Object> LIMITED = Map.of("gateway.lb.defaults.concurrency.limit", "fixed",
			"gateway.lb.defaults.concurrency.initial-limit", "1");

	@Test
	void aRequestFindingEveryEndpointAtItsLimitIsAnswered503WithRetryAfterAndNeverSent() {
		try (ScriptedExchanges service = new ScriptedExchanges(LIMITED, "a", "b")) {
			limitEveryEndpointTo(service, 1);
			ScriptedExchanges.Run first = service.start(HttpMethod.GET);
			ScriptedExchanges.Run second = service.start(HttpMethod.GET);
			assertThat(first.sends).hasSize(1);
			assertThat(second.sends).hasSize(1);
			assertThat(first.send(0).endpoint()).isNotEqualTo(second.send(0).endpoint());
			ScriptedExchanges.Run shed = service.start(HttpMethod.GET);
			assertThat(shed.sends).as("nothing sent").isEmpty();
			assertThat(shed.status()).isEqualTo(503);
			assertThat(shed.exchange.getResponse().getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
			assertThat(shed.body())
				.isEqualTo("{\"status\":503,\"error\":\"concurrency limit reached\",\"service\":\"svc\"}");
			assertThat(service.runtime.feature(OverloadState.class).shed().sum()).isEqualTo(1);
			assertThat(service.runtime.counters().retried().sum()).as("never retried").isZero();
			assertThat(service.runtime.counters().noEndpoint().sum()).isZero();
			finish(first, second);
			ScriptedExchanges.Run after = service.start(HttpMethod.GET);
			assertThat(after.sends).as("picked again once one ended").hasSize(1);
			finish(after);
			shed.end();
		}
	}

	@Test
	void aHedgedServiceShedsTheSameWay() {
		Map<String, Object> hedged = new java.util.HashMap<>(LIMITED);
		hedged.put("gateway.lb.defaults.hedge.max-extra-load", "0.5");
		try (ScriptedExchanges service = new ScriptedExchanges(hedged, "a")) {
			limitEveryEndpointTo(service, 1);
			ScriptedExchanges.Run first = service.start(HttpMethod.GET);
			ScriptedExchanges.Run shed = service.start(HttpMethod.GET);
			assertThat(shed.status()).isEqualTo(503);
			assertThat(shed.exchange.getResponse().getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
			assertThat(service.runtime.feature(OverloadState.class).shed().sum()).isEqualTo(1);
			finish(first);
			shed.end();
		}
	}

	@Test
	void aSuccessIsASampleAtTheEndOfItsBodyAFailureADropAndAClientGoneNothing() {
		try (ScriptedExchanges service = new ScriptedExchanges(LIMITED, "a")) {
			EndpointState endpoint = service.snapshot().state(0);
			LimitSamples state = service.runtime.feature(OverloadState.class).samples(endpoint);
			ScriptedExchanges.Run ok = service.start(HttpMethod.GET);
			ok.send(0).sent().answers(200);
			assertThat(state.samples()).as("headers only").isZero();
			ok.send(0).completes();
			assertThat(state.samples()).isEqualTo(1);
			assertThat(state.drops()).isZero();
			ok.end();

			ScriptedExchanges.Run timedOut = service.start(HttpMethod.POST);
			timedOut.send(0).sent().fails(ReadTimeoutException.INSTANCE);
			assertThat(state.drops()).isEqualTo(1);
			assertThat(state.samples()).as("a timeout is timed").isEqualTo(2);
			timedOut.end();

			ScriptedExchanges.Run gone = service.start(HttpMethod.GET);
			gone.send(0).sent();
			gone.cancel();
			gone.send(0).attempt.responseFailed(new java.io.IOException("connection reset"));
			assertThat(state.samples()).isEqualTo(2);
			assertThat(state.drops()).isEqualTo(1);
		}
	}

	@Test
	void aPartitionUnderItsShareGoesOverTheLimitsAndTheOneFurthestPastItsShareIsShed() {
		Map<String, Object> partitioned = new java.util.HashMap<>(LIMITED);
		partitioned.put("gateway.lb.defaults.concurrency.partition-by", "header:X-Class");
		partitioned.put("gateway.lb.defaults.concurrency.partitions.critical", "0.5");
		partitioned.put("gateway.lb.trusted-proxies", "192.0.2.0/24");
		try (ScriptedExchanges service = new ScriptedExchanges(partitioned, "a", "b")) {
			limitEveryEndpointTo(service, 2);
			// A service limit of 4: critical is guaranteed 2, the rest 2. Both were
			// offered requests and admitted none: demands past their shares, so neither
			// is owed a burst allowance, only its share.
			service.runtime.feature(OverloadState.class).partitions().refused(0);
			service.runtime.feature(OverloadState.class).partitions().refused(1);
			service.runtime.feature(OverloadState.class).partitions().serviceLimit(4);
			List<ScriptedExchanges.Run> rest = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				rest.add(service.start(HttpMethod.GET));
			}
			assertThat(rest.subList(0, 4)).as("its share of 2, then 2 borrowed from critical's idle share")
				.allSatisfy((run) -> assertThat(run.sends).hasSize(1));
			assertThat(rest.get(4).status()).as("past its share, the service at its limit").isEqualTo(503);
			ScriptedExchanges.Run critical = service.start(HttpMethod.GET, "X-Class", "critical");
			ScriptedExchanges.Run critical2 = service.start(HttpMethod.GET, "X-Class", "critical");
			ScriptedExchanges.Run critical3 = service.start(HttpMethod.GET, "X-Class", "critical");
			ScriptedExchanges.Run critical4 = service.start(HttpMethod.GET, "X-Class", "critical");
			ScriptedExchanges.Run critical5 = service.start(HttpMethod.GET, "X-Class", "critical");
			assertThat(List.of(critical, critical2)).as("its share")
				.allSatisfy((run) -> assertThat(run.sends).hasSize(1));
			assertThat(List.of(critical3, critical4)).as("past its share, but the rest is further past its own (4/2)")
				.allSatisfy((run) -> assertThat(run.sends).hasSize(1));
			assertThat(critical5.status()).as("as far past its share as the rest (4/2): shed").isEqualTo(503);
			ScriptedExchanges.Run rest6 = service.start(HttpMethod.GET);
			assertThat(rest6.status()).as("neither is further past than the rest").isEqualTo(503);
			assertThat(service.runtime.feature(OverloadState.class).partitions().report())
				.extracting((p) -> p.inFlight())
				.containsExactly(4, 4);
			finish(rest.get(0), rest.get(1), rest.get(2), rest.get(3), critical, critical2, critical3, critical4);
			rest.get(4).end();
			rest6.end();
			critical5.end();
			assertThat(service.runtime.feature(OverloadState.class).partitions().report())
				.extracting((p) -> p.inFlight())
				.containsExactly(0, 0);
		}
	}

	/**
	 * Issue 40: with {@code critical: 0.8}, {@code batch: 0.2}, half the requests each,
	 * at 150% of the capacity and no {@code max-wait}, a share counted only in requests
	 * in flight shed a tenth of critical's requests. Three endpoints with a fixed limit
	 * of 6 (a service limit of 18: critical is owed 15 places), every request served in
	 * 20 ms, so that the capacity is 900 requests a second; Poisson arrivals at 1,350 a
	 * second for 12 s of the manual clock, the first 2 s not counted.
	 */
	@Test
	void atOneAndAHalfTimesTheCapacityAPartitionWhoseLoadFitsItsShareKeeps98PercentWithoutWaiting() {
		Map<String, Object> properties = new java.util.HashMap<>();
		properties.put("gateway.lb.defaults.concurrency.limit", "fixed");
		properties.put("gateway.lb.defaults.concurrency.initial-limit", "6");
		properties.put("gateway.lb.defaults.concurrency.partition-by", "header:X-Class");
		properties.put("gateway.lb.defaults.concurrency.partitions.critical", "0.8");
		properties.put("gateway.lb.defaults.concurrency.partitions.batch", "0.2");
		properties.put("gateway.lb.trusted-proxies", "192.0.2.0/24");
		try (ScriptedExchanges service = new ScriptedExchanges(properties, "a", "b", "c")) {
			service.fixture.advance(java.time.Duration.ofMillis(200));
			assertThat(service.runtime.feature(OverloadState.class).partitions().serviceLimit()).isEqualTo(18);
			long serviceTime = java.time.Duration.ofMillis(20).toNanos();
			double meanGap = 1e9 / 1350;
			long warmUp = java.time.Duration.ofSeconds(2).toNanos();
			long end = java.time.Duration.ofSeconds(12).toNanos();
			java.util.SplittableRandom random = new java.util.SplittableRandom(40);
			java.util.PriorityQueue<Ending> endings = new java.util.PriorityQueue<>();
			long now = 0;
			long nextArrival = 0;
			long[] offered = new long[2];
			long[] admitted = new long[2];
			int mostInFlight = 0;
			while (nextArrival < end || !endings.isEmpty()) {
				Ending ending = endings.peek();
				boolean arrival = nextArrival < end && (ending == null || nextArrival < ending.at());
				long at = arrival ? nextArrival : ending.at();
				service.fixture.advance(java.time.Duration.ofNanos(at - now));
				now = at;
				if (!arrival) {
					finish(endings.poll().run());
					continue;
				}
				nextArrival += (long) (-Math.log(1 - random.nextDouble()) * meanGap);
				int critical = random.nextBoolean() ? 1 : 0;
				ScriptedExchanges.Run run = service.start(HttpMethod.GET, "X-Class",
						(critical == 1) ? "critical" : "batch");
				boolean sent = !run.sends.isEmpty();
				if (sent) {
					endings.add(new Ending(now + serviceTime, run));
					mostInFlight = Math.max(mostInFlight, service.inFlight());
				}
				else {
					assertThat(run.status()).isEqualTo(503);
					run.end();
				}
				if (now >= warmUp) {
					offered[critical]++;
					admitted[critical] += sent ? 1 : 0;
				}
			}
			double criticalAdmitted = (double) admitted[1] / offered[1];
			System.out.printf("critical admitted %d of %d (%.4f), batch %d of %d, most in flight %d%n", admitted[1],
					offered[1], criticalAdmitted, admitted[0], offered[0], mostInFlight);
			assertThat(criticalAdmitted).as("critical admitted, %d of %d", admitted[1], offered[1])
				.isGreaterThanOrEqualTo(0.98);
			// The endpoints serve 900 a second: batch is owed a fifth of that, 180 a
			// second over the 10 s counted.
			assertThat(admitted[0]).as("batch admitted").isGreaterThanOrEqualTo(1_800);
			assertThat(service.runtime.feature(OverloadState.class).partitions().report())
				.extracting((p) -> p.inFlight())
				.containsOnly(0);
		}
	}

	@Test
	void aPartitionHeaderIsTakenOnlyFromATrustedProxyAndEveryOtherRequestIsOfNoListedPartition() {
		Map<String, Object> partitioned = new java.util.HashMap<>(LIMITED);
		partitioned.put("gateway.lb.defaults.concurrency.initial-limit", "10");
		partitioned.put("gateway.lb.defaults.concurrency.partition-by", "header:X-Class");
		partitioned.put("gateway.lb.defaults.concurrency.partitions.critical", "0.5");
		partitioned.put("gateway.lb.trusted-proxies", "192.0.2.0/24");
		java.net.InetSocketAddress untrusted = new java.net.InetSocketAddress("198.51.100.7", 40000);
		try (ScriptedExchanges service = new ScriptedExchanges(partitioned, "a")) {
			ScriptedExchanges.Run trusted = service.start(HttpMethod.GET, "X-Class", "critical");
			ScriptedExchanges.Run direct = service.start(HttpMethod.GET, "X-Class", "critical", untrusted);
			assertThat(service.runtime.feature(OverloadState.class).partitions().report())
				.extracting((p) -> p.inFlight())
				.as("critical, the rest")
				.containsExactly(1, 1);
			finish(trusted, direct);
		}
		partitioned.remove("gateway.lb.trusted-proxies");
		try (ScriptedExchanges service = new ScriptedExchanges(partitioned, "a")) {
			ScriptedExchanges.Run run = service.start(HttpMethod.GET, "X-Class", "critical");
			assertThat(service.runtime.feature(OverloadState.class).partitions().report())
				.extracting((p) -> p.inFlight())
				.as("no trusted proxies: no header is believed")
				.containsExactly(0, 1);
			finish(run);
		}
	}

	@Test
	void withMaxWaitARequestThatFindsNoPlaceWaitsForTheNextToEndAndIsSentThere() {
		Map<String, Object> waiting = new java.util.HashMap<>(LIMITED);
		waiting.put("gateway.lb.defaults.concurrency.max-wait", "10s");
		try (ScriptedExchanges service = new ScriptedExchanges(waiting, "a")) {
			limitEveryEndpointTo(service, 1);
			ScriptedExchanges.Run first = service.start(HttpMethod.GET);
			ScriptedExchanges.Run second = service.start(HttpMethod.GET);
			assertThat(second.sends).as("waiting, not sent").isEmpty();
			assertThat(second.status()).as("not answered").isZero();
			assertThat(service.runtime.feature(OverloadState.class).partitions().waiting()).isEqualTo(1);
			ScriptedExchanges.Run third = service.start(HttpMethod.GET);
			assertThat(third.status()).as("the queue holds as many as the limit, one before it is known")
				.isEqualTo(503);
			finish(first);
			assertThat(second.sends).as("sent once the first ended").hasSize(1);
			assertThat(service.runtime.feature(OverloadState.class).partitions().waiting()).isZero();
			assertThat(service.runtime.feature(OverloadState.class).shed().sum()).as("the third only").isEqualTo(1);
			finish(second);
			third.end();
		}
	}

	@Test
	void oneClientHoldsAtMostMaxWaitPerClientOfTheWaitQueueAndItsNextRequestIsShedAtOnce() {
		Map<String, Object> waiting = new java.util.HashMap<>(LIMITED);
		waiting.put("gateway.lb.defaults.concurrency.max-wait", "10s");
		waiting.put("gateway.lb.defaults.concurrency.max-wait-per-client", "0.2");
		java.net.InetSocketAddress other = new java.net.InetSocketAddress("198.51.100.7", 40000);
		try (ScriptedExchanges service = new ScriptedExchanges(waiting, "a")) {
			limitEveryEndpointTo(service, 1);
			// A queue of 10 (the service's limit): a fifth of it, 2, per client.
			service.runtime.feature(OverloadState.class).partitions().serviceLimit(10);
			ScriptedExchanges.Run first = service.start(HttpMethod.GET);
			List<ScriptedExchanges.Run> waiters = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				waiters.add(service.start(HttpMethod.GET));
			}
			ScriptedExchanges.Run third = service.start(HttpMethod.GET);
			assertThat(waiters).as("waiting").allSatisfy((run) -> assertThat(run.status()).isZero());
			assertThat(third.status()).as("the client's third waiter: shed at once").isEqualTo(503);
			ScriptedExchanges.Run another = service.start(HttpMethod.GET, "X-Test", "", other);
			assertThat(another.status()).as("another client still waits").isZero();
			assertThat(service.runtime.feature(OverloadState.class).partitions().waiting()).isEqualTo(3);
			finish(first);
			finish(waiters.get(0));
			ScriptedExchanges.Run again = service.start(HttpMethod.GET);
			assertThat(again.status()).as("one of its two left the queue: it may wait again").isZero();
			finish(waiters.get(1), another, again);
			third.end();
			assertThat(service.runtime.feature(OverloadState.class).partitions().waiting()).isZero();
			assertThat(service.runtime.feature(OverloadState.class).shed().sum()).isEqualTo(1);
		}
	}

	@Test
	void aWaiterNoPlaceFreesForIsShedAtItsDeadline() {
		Map<String, Object> waiting = new java.util.HashMap<>(LIMITED);
		waiting.put("gateway.lb.defaults.concurrency.max-wait", "50ms");
		try (ScriptedExchanges service = new ScriptedExchanges(waiting, "a")) {
			limitEveryEndpointTo(service, 1);
			ScriptedExchanges.Run first = service.start(HttpMethod.GET);
			ScriptedExchanges.Run second = service.start(HttpMethod.GET);
			assertThat(second.status()).isZero();
			service.fixture.advance(java.time.Duration.ofMillis(49));
			assertThat(second.status()).as("not before max-wait").isZero();
			service.fixture.advance(java.time.Duration.ofMillis(1));
			assertThat(second.status()).as("at max-wait").isEqualTo(503);
			assertThat(second.sends).isEmpty();
			assertThat(service.runtime.feature(OverloadState.class).partitions().waiting()).isZero();
			assertThat(service.runtime.feature(OverloadState.class).shed().sum()).isEqualTo(1);
			finish(first);
			second.end();
		}
	}

	@Test
	void aWaiterWhoseClientLeftIsOutOfTheQueueAndTheNextOneGetsThePlace() {
		Map<String, Object> waiting = new java.util.HashMap<>(LIMITED);
		waiting.put("gateway.lb.defaults.concurrency.max-wait", "10s");
		// Both waiters are one client's: the whole queue may be its.
		waiting.put("gateway.lb.defaults.concurrency.max-wait-per-client", "1");
		try (ScriptedExchanges service = new ScriptedExchanges(waiting, "a")) {
			limitEveryEndpointTo(service, 1);
			service.runtime.feature(OverloadState.class).partitions().serviceLimit(2);
			ScriptedExchanges.Run first = service.start(HttpMethod.GET);
			ScriptedExchanges.Run gone = service.start(HttpMethod.GET);
			ScriptedExchanges.Run next = service.start(HttpMethod.GET);
			assertThat(service.runtime.feature(OverloadState.class).partitions().waiting()).isEqualTo(2);
			gone.cancel();
			assertThat(service.runtime.feature(OverloadState.class).partitions().waiting()).isEqualTo(1);
			finish(first);
			assertThat(gone.sends).isEmpty();
			assertThat(next.sends).as("the place went to the one still waiting").hasSize(1);
			assertThat(service.runtime.feature(OverloadState.class).partitions().waiting()).isZero();
			assertThat(service.runtime.feature(OverloadState.class).shed().sum()).as("a client gone is not shed")
				.isZero();
			finish(next);
			assertThat(service.snapshot().state(0).inFlight()).isZero();
		}
	}

	@Test
	void aWaiterPicksOnceMoreAtItsDeadlineAndIsSentIfAPlaceFreedWithoutWakingIt() {
		Map<String, Object> waiting = new java.util.HashMap<>(LIMITED);
		waiting.put("gateway.lb.defaults.concurrency.max-wait", "50ms");
		try (ScriptedExchanges service = new ScriptedExchanges(waiting, "a")) {
			limitEveryEndpointTo(service, 1);
			ScriptedExchanges.Run first = service.start(HttpMethod.GET);
			ScriptedExchanges.Run second = service.start(HttpMethod.GET);
			assertThat(second.sends).isEmpty();
			// A place no ending request frees, so nothing wakes the waiter: as one freed
			// between a failed pick and the waiter's joining the queue.
			limitEveryEndpointTo(service, 2);
			service.fixture.advance(java.time.Duration.ofMillis(49));
			assertThat(second.sends).as("waiting until its deadline").isEmpty();
			service.fixture.advance(java.time.Duration.ofMillis(1));
			assertThat(second.status()).as("not shed").isZero();
			assertThat(second.sends).hasSize(1);
			assertThat(service.runtime.feature(OverloadState.class).shed().sum()).isZero();
			finish(first, second);
		}
	}

	private record Ending(long at, ScriptedExchanges.Run run) implements Comparable<Ending> {

		@Override
		public int compareTo(Ending other) {
			return Long.compare(this.at, other.at);
		}

	}

	private static void limitEveryEndpointTo(ScriptedExchanges service, int limit) {
		Snapshot<Member> snapshot = service.snapshot();
		for (int i = 0; i < snapshot.size(); i++) {
			snapshot.state(i).concurrencyLimit(limit);
		}
	}

	private static void finish(ScriptedExchanges.Run... runs) {
		for (ScriptedExchanges.Run run : runs) {
			run.send(0).sent().answers(200);
			run.send(0).completes();
			run.end();
		}
	}

}
