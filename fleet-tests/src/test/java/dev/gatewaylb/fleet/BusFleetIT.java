package dev.gatewaylb.fleet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.gatewaylb.internal.bus.BusFleetDecisions;
import dev.gatewaylb.bus.RolloutVerdictEvent;
import dev.gatewaylb.internal.settings.LiveSettings;
import dev.gatewaylb.internal.rollout.Rollout;
import dev.gatewaylb.internal.rollout.RolloutTrack;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.rollout.Verdict;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.cloud.bus.event.RefreshRemoteApplicationEvent;
import org.springframework.context.ApplicationEvent;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two gateway replicas with Spring Cloud Bus on an AMQP broker ({@link AmqpBroker}: the
 * RabbitMQ {@code .ci/run} starts, or Qpid Broker-J in this JVM): a rollout verdict or a
 * drain taken on one replica is followed by the other at once, and one
 * {@code POST /actuator/busrefresh} changes both.
 * <p>
 * Both replicas import one configuration file, as replicas reading one Spring Cloud
 * Config server do; a test rewrites it and posts the refresh to one replica.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BusFleetIT {

	@TempDir
	static Path directory;

	static Path config;

	static final Backend stable = Backend.start("stable");

	static final Backend canary = Backend.start("canary").status(500);

	static final Backend other = Backend.start("other");

	static final Backend catalogA = Backend.start("catalog-a");

	static final Backend catalogB = Backend.start("catalog-b");

	static final Backend cartStable = Backend.start("cart-stable");

	static final Backend cartCanary = Backend.start("cart-canary");

	static Gateway first;

	static Gateway second;

	/**
	 * A replica started during a test, and one of another fleet.
	 */
	static Gateway started;

	static Gateway another;

	static AmqpBroker broker;

	@BeforeAll
	static void start() throws IOException, InterruptedException {
		try {
			broker = AmqpBroker.get();
		}
		catch (AmqpBroker.Unavailable ex) {
			if (ex.requested()) {
				throw new IllegalStateException(ex.getMessage(), ex);
			}
			Assumptions.abort(ex.getMessage());
		}
		config = directory.resolve("fleet.properties");
		write(fleetConfig(1, 1, 90));
		first = Gateway.start(replica("replica-1"));
		second = Gateway.start(replica("replica-2"));
		// A replica's first bus message also creates its output binding and its publisher
		// connection, seconds on a busy machine: sent once here, so that the tests time
		// how fast a decision travels, not that set-up.
		CountDownLatch heard = new CountDownLatch(1);
		second.context().addApplicationListener((ApplicationEvent event) -> {
			if (event instanceof RefreshRemoteApplicationEvent) {
				heard.countDown();
			}
		});
		assertThat(first.post("/actuator/busrefresh")).isEqualTo(204);
		assertThat(heard.await(30, TimeUnit.SECONDS)).as("the second replica hears the first's bus refresh").isTrue();
	}

	@AfterAll
	static void stop() {
		for (AutoCloseable closeable : new AutoCloseable[] { another, started, first, second, stable, canary, other,
				catalogA, catalogB, cartStable, cartCanary }) {
			try {
				if (closeable != null) {
					closeable.close();
				}
			}
			catch (Exception ex) {
				// the rest still closes
			}
		}
	}

	@Test
	void aRollbackOnOneReplicasTrafficRollsBackBoth() {
		SplitRollouts firstRollouts = first.context().getBean(SplitRollouts.class);
		SplitRollouts secondRollouts = second.context().getBean(SplitRollouts.class);
		// Only the first replica takes traffic: the second never has enough canary
		// requests to judge, and would hold its 50% step for ever.
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		int sent = 0;
		while (state(secondRollouts) != Rollout.State.ROLLED_BACK && System.nanoTime() < deadline) {
			first.get("/shop/");
			sent++;
		}
		assertThat(state(secondRollouts)).as("the second replica, after %d requests to the first", sent)
			.isEqualTo(Rollout.State.ROLLED_BACK);
		assertThat(state(firstRollouts)).isEqualTo(Rollout.State.ROLLED_BACK);
		Verdict judged = last(firstRollouts.track("shop").verdicts());
		Verdict followed = last(secondRollouts.track("shop").verdicts());
		assertThat(judged.reason()).startsWith("error rate ");
		assertThat(followed.reason()).isEqualTo("by fleet-it:replica-1: " + judged.reason());
		assertThat(followed.atMillis() - judged.atMillis()).as("ms from the verdict to the follower")
			.isBetween(0L, 1_000L);
		System.out.println("FLEET rollback followed in " + (followed.atMillis() - judged.atMillis()) + " ms");
		assertThat(second.body("/actuator/gatewaylb/shop")).contains("\"state\":\"rolled-back\"",
				"\"reason\":\"rolled back by fleet-it:replica-1: error rate ");
	}

	@Test
	void oneBusRefreshChangesWeightsAndASplitOnBothReplicasAndAnInvalidPushIsRejectedOnBoth()
			throws IOException, InterruptedException {
		long generation = generation(second);
		// Clients keep both replicas busy while the change reaches them.
		List<String> answers = java.util.Collections.synchronizedList(new ArrayList<>());
		java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
		Thread clients = new Thread(() -> {
			for (int i = 0; running.get(); i++) {
				answers.add(((i % 2 == 0) ? first : second).get("/catalog/"));
			}
		});
		clients.start();
		try {
			write(fleetConfig(3, 1, 50));
			long posted = System.nanoTime();
			assertThat(first.post("/actuator/busrefresh")).isEqualTo(204);
			Awaitility.await()
				.atMost(Duration.ofSeconds(10))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> generation(first) > generation && generation(second) > generation);
			System.out
				.println("FLEET bus refresh applied on both in " + (System.nanoTime() - posted) / 1_000_000 + " ms");
			int before = answers.size();
			Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answers.size() > before + 100);
		}
		finally {
			running.set(false);
			clients.join(30_000);
		}
		for (Gateway replica : new Gateway[] { first, second }) {
			String report = replica.body("/actuator/gatewaylb");
			assertThat(report).contains("\"address\":\"" + catalogA.address() + "\",\"weight\":3,",
					"{\"service\":\"catalog\",\"weight\":50,");
		}
		System.out.println("FLEET answers during the bus refresh: " + answers.size());
		assertThat(answers).as("answers during the push").containsOnly("catalog-a", "catalog-b");

		Map<String, Object> invalid = new HashMap<>(fleetConfig(3, 1, 50));
		invalid.put("gateway.lb.services.catalog.algorithm", "fastest");
		write(invalid);
		assertThat(first.post("/actuator/busrefresh")).isIn(204, 500);
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> lastError(first).contains("gateway.lb.services.catalog.algorithm")
					&& lastError(second).contains("gateway.lb.services.catalog.algorithm"));
		assertThat(first.body("/actuator/gatewaylb")).contains("\"weight\":3,");
		write(fleetConfig(3, 1, 50));
		assertThat(first.post("/actuator/busrefresh")).isEqualTo(204);
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> lastError(first).equals("null") && lastError(second).equals("null"));
	}

	@Test
	void aDrainThroughOneReplicasActuatorDrainsTheEndpointOnBoth() {
		String body = "{\"endpoint\":\"" + catalogB.address() + "\",\"drain\":true}";
		assertThat(first.post("/actuator/gatewaylb/catalog", body)).isEqualTo(200);
		Awaitility.await()
			.atMost(Duration.ofSeconds(5))
			.until(() -> second.body("/actuator/gatewaylb/catalog").contains("\"state\":\"draining\""));
		for (int i = 0; i < 20; i++) {
			assertThat(second.get("/catalog/")).isEqualTo("catalog-a");
		}
		body = "{\"endpoint\":\"" + catalogB.address() + "\",\"drain\":false}";
		assertThat(first.post("/actuator/gatewaylb/catalog", body)).isEqualTo(200);
		Awaitility.await()
			.atMost(Duration.ofSeconds(5))
			.until(() -> !second.body("/actuator/gatewaylb/catalog").contains("\"state\":\"draining\""));
	}

	/**
	 * Last: it rolls the cart rollout back.
	 */
	@Test
	@Order(Integer.MAX_VALUE)
	void aPromotionSurvivesARestartAndNeitherAStaleNorAReplayedRollBackNorAnotherFleetChangesIt() {
		List<RolloutVerdictEvent> told = new java.util.concurrent.CopyOnWriteArrayList<>();
		first.context().addApplicationListener((ApplicationEvent event) -> {
			if (event instanceof RolloutVerdictEvent verdict && verdict.getSplit().equals("cart")) {
				told.add(verdict);
			}
		});
		assertThat(first.post("/actuator/gatewaylb/cart", "{\"rollout\":\"promote\"}")).isEqualTo(200);
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> cart(second) == Rollout.State.PROMOTED && !told.isEmpty());
		RolloutVerdictEvent promotion = told.get(0);

		// A replica that starts: a restart and a scale-up take the same path. (Closing a
		// replica here would stop Reactor Netty's global event loops, which every
		// replica in this JVM runs on.)
		started = Gateway.start(replica("replica-3"));
		long up = System.nanoTime();
		Awaitility.await()
			.atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> cart(started) == Rollout.State.PROMOTED);
		System.out.println("FLEET a started replica took its peer's promoted state "
				+ (System.nanoTime() - up) / 1_000_000 + " ms after its context was up");
		RolloutTrack restarted = started.context().getBean(SplitRollouts.class).track("cart");
		// Both replicas are promoted: the first to answer is the one followed.
		assertThat(last(restarted.verdicts()).reason()).isIn("as fleet-it:replica-1 has it",
				"as fleet-it:replica-2 has it");
		for (int i = 0; i < 20; i++) {
			assertThat(started.get("/cart/")).as("request %d after the start", i).isEqualTo("cart-canary");
		}

		// A judgement's roll-back older than the promotion (a replica's late verdict, a
		// replay), published twice from the first replica.
		BusFleetDecisions decisions = started.context().getBean(BusFleetDecisions.class);
		long stale = decisions.rejectedEvents("stale");
		long duplicate = decisions.rejectedEvents("duplicate");
		RolloutVerdictEvent late = BusEvents.from(first, new RolloutVerdictEvent());
		late.setFleet(promotion.getFleet());
		late.setVersion(promotion.getVersion() - 1);
		late.setSplit("cart");
		late.setPlan(promotion.getPlan());
		late.setAction("roll-back");
		late.setReason("error rate 1.0000 against 0.0000 of the other targets");
		first.context().publishEvent(late);
		first.context().publishEvent(late);
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> decisions.rejectedEvents("stale") > stale
					&& decisions.rejectedEvents("duplicate") > duplicate);
		assertThat(cart(started)).isEqualTo(Rollout.State.PROMOTED);

		Map<String, Object> neighbour = replica("neighbour-1");
		neighbour.put("gateway.lb.fleet.name", "another-fleet");
		another = Gateway.start(neighbour);
		BusFleetDecisions theirs = another.context().getBean(BusFleetDecisions.class);
		long foreign = theirs.rejectedEvents("other-fleet");
		assertThat(first.post("/actuator/gatewaylb/cart", "{\"rollout\":\"roll-back\"}")).isEqualTo(200);
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> cart(started) == Rollout.State.ROLLED_BACK && theirs.rejectedEvents("other-fleet") > foreign);
		assertThat(cart(another)).as("the other fleet's rollout, waiting for its own peers")
			.isEqualTo(Rollout.State.PAUSED);
		assertThat(another.context().getBean(SplitRollouts.class).track("cart").awaitsPeers()).isTrue();
	}

	private static Rollout.State cart(Gateway replica) {
		RolloutTrack track = replica.context().getBean(SplitRollouts.class).track("cart");
		return (track != null) ? track.status().state() : null;
	}

	private static long generation(Gateway replica) {
		String report = replica.body("/actuator/gatewaylb");
		String rest = report.substring(report.indexOf("\"generation\":") + 13);
		return Long.parseLong(rest.substring(0, rest.indexOf(',')));
	}

	/**
	 * Returns why the replica rejected its last refresh, as its settings hold it: the
	 * actuator tells it only to a signed-in reader.
	 */
	private static String lastError(Gateway replica) {
		return String.valueOf(replica.context().getBean(LiveSettings.class).lastError());
	}

	/**
	 * The shared configuration: the catalog endpoints' weights and the web split's
	 * catalog weight (the rest goes to other).
	 */
	private static Map<String, Object> fleetConfig(int weightA, int weightB, int catalogShare) {
		Map<String, Object> properties = new HashMap<>();
		properties.put("spring.cloud.discovery.client.simple.instances.catalog[0].uri",
				"http://127.0.0.1:" + catalogA.port());
		properties.put("spring.cloud.discovery.client.simple.instances.catalog[0].metadata.weight", weightA);
		properties.put("spring.cloud.discovery.client.simple.instances.catalog[1].uri",
				"http://127.0.0.1:" + catalogB.port());
		properties.put("spring.cloud.discovery.client.simple.instances.catalog[1].metadata.weight", weightB);
		properties.put("gateway.lb.splits.web.targets.catalog", catalogShare);
		properties.put("gateway.lb.splits.web.targets.other", 100 - catalogShare);
		properties.put("gateway.lb.splits.shop.targets.shop-stable", 100);
		return properties;
	}

	private static Rollout.State state(SplitRollouts rollouts) {
		RolloutTrack track = rollouts.track("shop");
		return (track != null) ? track.status().state() : null;
	}

	private static <T> T last(List<T> values) {
		return values.get(values.size() - 1);
	}

	private static Map<String, Object> replica(String id) {
		Map<String, Object> properties = new HashMap<>(BusSettings.replica(id, broker));
		properties.put("spring.config.import", "optional:file:" + config);
		properties.put("spring.cloud.discovery.client.simple.instances.shop-stable[0].uri",
				"http://127.0.0.1:" + stable.port());
		properties.put("spring.cloud.discovery.client.simple.instances.shop-canary[0].uri",
				"http://127.0.0.1:" + canary.port());
		Gateway.route(properties, 0, "shop");
		properties.put("spring.cloud.discovery.client.simple.instances.other[0].uri",
				"http://127.0.0.1:" + other.port());
		Gateway.route(properties, 1, "catalog");
		// A rollout only an operator moves: its interval is longer than the test.
		properties.put("spring.cloud.discovery.client.simple.instances.cart-stable[0].uri",
				"http://127.0.0.1:" + cartStable.port());
		properties.put("spring.cloud.discovery.client.simple.instances.cart-canary[0].uri",
				"http://127.0.0.1:" + cartCanary.port());
		Gateway.route(properties, 2, "cart");
		properties.put("gateway.lb.splits.cart.targets.cart-stable", 100);
		properties.put("gateway.lb.splits.cart.targets.cart-canary", 0);
		properties.put("gateway.lb.splits.cart.rollout.target", "cart-canary");
		properties.put("gateway.lb.splits.cart.rollout.steps", "50,100");
		properties.put("gateway.lb.splits.cart.rollout.interval", "1h");
		properties.put("gateway.lb.splits.cart.rollout.min-requests", 1000);
		properties.put("gateway.lb.splits.shop.targets.shop-canary", 0);
		properties.put("gateway.lb.splits.shop.rollout.target", "shop-canary");
		properties.put("gateway.lb.splits.shop.rollout.steps", "50,100");
		properties.put("gateway.lb.splits.shop.rollout.interval", "2s");
		properties.put("gateway.lb.splits.shop.rollout.min-requests", 20);
		// The test's traffic is one client's.
		properties.put("gateway.lb.splits.shop.rollout.max-outcomes-per-client", 0);
		properties.put("gateway.lb.splits.shop.rollout.min-clients", 1);
		properties.put("eureka.client.enabled", false);
		// The embedded broker logs each connection, channel and queue at INFO.
		properties.put("logging.level.qpid", "warn");
		properties.put("logging.level.org.apache.qpid", "warn");
		return properties;
	}

	private static void write(Map<String, Object> properties) throws IOException {
		List<String> lines = new ArrayList<>();
		properties.forEach((key, value) -> lines.add(key + "=" + value));
		Files.write(config, lines);
	}

}
