package dev.gatewaylb.internal.discovery;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import dev.gatewaylb.internal.control.ManualControlThread;
import dev.gatewaylb.gateway.discovery.InstanceSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The discovery poll on a control thread and a clock the test drives: the first poll at
 * once, a change at the next poll, a reshuffle no change, an empty list believed only one
 * interval later, a failing source keeping the last list, and readiness after the first
 * answer, the first failure or the first-poll timeout.
 */
class DiscoveryPollerTests {

	private static final Duration INTERVAL = DiscoveryPoller.POLL_INTERVAL;

	private final AtomicLong clock = new AtomicLong(1_000_000_000L);

	private final ManualControlThread control = new ManualControlThread(this.clock);

	/**
	 * What the source answers, by service id.
	 */
	private Function<String, Mono<List<ServiceInstance>>> answers = (id) -> Mono.just(List.of());

	private final DiscoveryPoller poller = new DiscoveryPoller(new InstanceSource() {

		@Override
		public boolean balancesHere(String serviceId) {
			return true;
		}

		@Override
		public Mono<List<ServiceInstance>> instances(String serviceId) {
			return DiscoveryPollerTests.this.answers.apply(serviceId);
		}

	}, this.control);

	private final List<String> heard = new ArrayList<>();

	private final Map<String, Integer> rejected = new java.util.TreeMap<>();

	@BeforeEach
	void start() {
		this.poller.start();
	}

	@Test
	void readsAServiceAtOnceWhenWatchedAndTellsItsMembersAndThatItIsReady() {
		answer(instance("a", 1), instance("b", 2));
		watch("svc");
		assertThat(this.heard).isEmpty();
		this.control.runDue();
		assertThat(this.heard).containsExactly("svc: [] -> [a:1, b:2]", "svc ready");
	}

	@Test
	void tellsAChangeAtTheNextPollAndNeitherAReshuffleNorTheSameList() {
		answer(instance("a", 1), instance("b", 1));
		watch("svc");
		this.control.runDue();
		this.heard.clear();
		answer(instance("b", 1), instance("a", 1));
		this.control.advance(INTERVAL);
		assertThat(this.heard).as("reshuffled").containsExactly("svc ready");
		answer(instance("b", 1), instance("a", 1), instance("c", 1));
		this.control.advance(INTERVAL.minusNanos(1));
		assertThat(this.heard).as("not polled yet").containsExactly("svc ready");
		this.control.advance(Duration.ofNanos(1));
		assertThat(this.heard).containsExactly("svc ready", "svc: [a:1, b:1] -> [a:1, b:1, c:1]", "svc ready");
		this.heard.clear();
		answer(instance("a", 1), instance("b", 5), instance("c", 1));
		this.poller.pollNow();
		this.control.runDue();
		assertThat(this.heard).as("a weight changed, read at once when asked")
			.containsExactly("svc: [a:1, b:1, c:1] -> [a:1, b:5, c:1]", "svc ready");
	}

	@Test
	void believesAnEmptyListOnlyWhenAPollAtLeastOneIntervalLaterSaysSoAgain() {
		answer(instance("a", 1), instance("b", 1));
		watch("svc");
		this.control.runDue();
		this.heard.clear();
		answer();
		this.control.advance(INTERVAL);
		this.poller.pollNow();
		this.control.advance(INTERVAL.minusNanos(1));
		assertThat(this.heard).as("two empty reads, less than an interval apart").isEmpty();
		this.control.advance(Duration.ofNanos(1));
		assertThat(this.heard).containsExactly("svc: [a:1, b:1] -> []", "svc ready");
	}

	@Test
	void anEmptyReadBetweenTwoFullOnesIsNeverBelieved() {
		answer(instance("a", 1));
		watch("svc");
		this.control.runDue();
		this.heard.clear();
		answer();
		this.control.advance(INTERVAL);
		answer(instance("a", 1));
		this.control.advance(INTERVAL);
		answer();
		this.control.advance(INTERVAL);
		assertThat(this.heard).as("the full read in between starts the confirmation again")
			.containsExactly("svc ready");
	}

	@Test
	void aFailingSourceKeepsTheLastListAndTheServiceIsReadyAllTheSame() {
		answer(instance("a", 1));
		watch("svc");
		this.control.runDue();
		this.heard.clear();
		this.answers = (id) -> Mono.error(new IllegalStateException("discovery is down"));
		this.control.advance(INTERVAL);
		this.answers = (id) -> {
			throw new IllegalStateException("discovery is down");
		};
		this.control.advance(INTERVAL);
		assertThat(this.heard).containsExactly("svc ready", "svc ready");
		answer(instance("a", 1), instance("b", 1));
		this.control.advance(INTERVAL);
		assertThat(this.heard).containsExactly("svc ready", "svc ready", "svc: [a:1] -> [a:1, b:1]", "svc ready");
	}

	@Test
	void aServiceWhoseSourceNeverAnswersIsReadyAfterTheFirstPollTimeoutAndIsNotPolledTwiceAtOnce() {
		int[] asked = new int[1];
		this.answers = (id) -> {
			asked[0]++;
			return Mono.never();
		};
		watch("svc");
		this.control.runDue();
		this.control.advance(DiscoveryPoller.FIRST_POLL_TIMEOUT.minusNanos(1));
		assertThat(this.heard).isEmpty();
		assertThat(asked[0]).as("a poll still on its way is not asked again").isOne();
		this.control.advance(Duration.ofNanos(1));
		assertThat(this.heard).containsExactly("svc ready");
	}

	@Test
	void balancesAnInstanceWithAnInvalidWeightWithWeightOne() {
		answer(new DefaultServiceInstance("a", "svc", "10.0.0.1", 1, false, Map.of("weight", "heavy")),
				instance("b", 3));
		watch("svc");
		this.control.runDue();
		assertThat(this.heard).first().isEqualTo("svc: [] -> [a:1, b:3]");
	}

	@Test
	void pollsEveryServiceOnANamedJobOfItsOwn() {
		this.answers = (id) -> Mono.just(List.of(instance(id.equals("one") ? "a" : "b", 1)));
		watch("one");
		watch("two");
		this.control.runDue();
		assertThat(this.heard).containsExactly("one: [] -> [a:1]", "one ready", "two: [] -> [b:1]", "two ready");
		this.poller.start();
		assertThat(this.control.jobs()).containsExactly("discovery-poll every 1000ms");
	}

	@Test
	void aSourceThatThrowsAnErrorForOneServiceStopsNeitherTheOthersNorItsOwnNextPoll() {
		AtomicBoolean broken = new AtomicBoolean(true);
		AtomicReference<List<ServiceInstance>> listed = new AtomicReference<>(List.of(instance("a", 1)));
		this.answers = (id) -> {
			if (id.equals("broken") && broken.get()) {
				throw new NoClassDefFoundError("expected by the test");
			}
			return Mono.just(listed.get());
		};
		watch("broken");
		watch("other");
		this.control.runDue();
		this.heard.clear();
		listed.set(List.of(instance("a", 1), instance("b", 1)));
		this.control.advance(INTERVAL);
		assertThat(this.heard).as("the service after the broken one is polled")
			.contains("other: [a:1] -> [a:1, b:1]")
			.noneMatch((heard) -> heard.startsWith("broken:"));
		broken.set(false);
		this.control.advance(INTERVAL);
		assertThat(this.heard).as("the broken one is polled again").contains("broken: [] -> [a:1, b:1]");
	}

	@Test
	void skipsInvalidInstancesAndKeepsOneOfEachAddressTheSameOneWhateverTheOrder() {
		ServiceInstance heavyDuplicate = new DefaultServiceInstance("z", "svc", "10.0.0.1", 1, false,
				Map.of("weight", "9"));
		List<ServiceInstance> bad = List.of(new DefaultServiceInstance("n", "svc", null, 80, false, Map.of()),
				new DefaultServiceInstance("p0", "svc", "10.0.0.9", 0, false, Map.of()),
				new DefaultServiceInstance("p7", "svc", "10.0.0.9", 70000, false, Map.of()),
				new DefaultServiceInstance("h", "svc", "bad host", 80, false, Map.of()),
				new DefaultServiceInstance("u", "svc", "evil.com/x#", 80, false, Map.of()));
		List<ServiceInstance> listed = new ArrayList<>(bad);
		listed.addAll(List.of(instance("a", 1), heavyDuplicate, instance("b", 2)));
		this.answers = (id) -> Mono.just(List.copyOf(listed));
		watch("svc");
		this.control.runDue();
		assertThat(this.heard).containsExactly("svc: [] -> [a:1, b:2]", "svc ready");
		assertThat(this.rejected).containsExactly(Map.entry("duplicate", 1), Map.entry("invalid-host", 2),
				Map.entry("invalid-port", 2), Map.entry("no-host", 1));
		this.heard.clear();
		for (int round = 0; round < 5; round++) {
			java.util.Collections.reverse(listed);
			this.control.advance(INTERVAL);
		}
		assertThat(this.heard).as("the same list, reshuffled, duplicates and all: no change").containsOnly("svc ready");
		assertThat(this.rejected).containsEntry("duplicate", 6).containsEntry("no-host", 6);
		listed.add(instance("c", 3));
		this.control.advance(INTERVAL);
		assertThat(this.heard).as("later changes are followed").contains("svc: [a:1, b:2] -> [a:1, b:2, c:3]");
	}

	@Test
	void balancesAnInstanceWithoutMetadataWithWeight1AndCapsAHugeWeight() {
		answer(new DefaultServiceInstance("a", "svc", "10.0.0.1", 1, false, null),
				new DefaultServiceInstance("b", "svc", "10.0.0.2", 2, false, Map.of("weight", "2147483647")));
		watch("svc");
		this.control.runDue();
		assertThat(this.heard).containsExactly("svc: [] -> [a:1, b:1000]", "svc ready");
	}

	@Test
	void aSourceThatHearsOfChangesHasTheServiceReadAtOnceAndAgainWhenAReadWasUnderWay() {
		java.util.concurrent.atomic.AtomicReference<java.util.function.Consumer<String>> pushes = new java.util.concurrent.atomic.AtomicReference<>();
		DiscoveryPoller pushed = new DiscoveryPoller(new InstanceSource() {

			@Override
			public boolean balancesHere(String serviceId) {
				return true;
			}

			@Override
			public Mono<List<ServiceInstance>> instances(String serviceId) {
				return DiscoveryPollerTests.this.answers.apply(serviceId);
			}

			@Override
			public void onChange(java.util.function.Consumer<String> changed) {
				pushes.set(changed);
			}

		}, this.control);
		pushed.start();
		answer(instance("a", 1));
		this.control.execute(() -> pushed.watch("svc", new DiscoveryPoller.Listener() {

			@Override
			public void membersChanged(Membership previous, Membership next) {
				DiscoveryPollerTests.this.heard.add(describe(previous) + " -> " + describe(next));
			}

			@Override
			public void ready() {
			}

		}));
		this.control.runDue();
		this.heard.clear();
		answer(instance("a", 1), instance("b", 1));
		pushes.get().accept("SVC");
		this.control.runDue();
		assertThat(this.heard).as("read at once, no poll interval passed").containsExactly("[a:1] -> [a:1, b:1]");

		// A read under way when the change is told: read again once it is in.
		this.heard.clear();
		reactor.core.publisher.Sinks.One<List<ServiceInstance>> slow = reactor.core.publisher.Sinks.one();
		this.answers = (id) -> slow.asMono();
		pushes.get().accept("svc");
		this.control.runDue();
		answer(instance("c", 1));
		pushes.get().accept("svc");
		this.control.runDue();
		slow.tryEmitValue(List.of(instance("a", 1), instance("b", 1)));
		this.control.runDue();
		assertThat(this.heard).containsExactly("[a:1, b:1] -> [c:1]");
	}

	private void watch(String serviceId) {
		this.control.execute(() -> this.poller.watch(serviceId, new DiscoveryPoller.Listener() {

			@Override
			public void membersChanged(Membership previous, Membership next) {
				DiscoveryPollerTests.this.heard.add(serviceId + ": " + describe(previous) + " -> " + describe(next));
			}

			@Override
			public void ready() {
				DiscoveryPollerTests.this.heard.add(serviceId + " ready");
			}

			@Override
			public void rejected(DiscoveryRejection rejection) {
				DiscoveryPollerTests.this.rejected.merge(rejection.tag(), 1, Integer::sum);
			}

		}));
	}

	private void answer(ServiceInstance... instances) {
		List<ServiceInstance> listed = List.of(instances);
		this.answers = (id) -> Mono.just(listed);
	}

	private static String describe(Membership membership) {
		return membership.members()
			.stream()
			.map((member) -> member.instance().getInstanceId() + ":" + member.endpoint().weight())
			.toList()
			.toString();
	}

	/**
	 * An instance on 10.0.0.n:n, n = letter index + 1.
	 */
	private static ServiceInstance instance(String id, int weight) {
		int n = id.charAt(0) - 'a' + 1;
		return new DefaultServiceInstance(id, "svc", "10.0.0." + n, n, false, Map.of("weight", "" + weight));
	}

}
