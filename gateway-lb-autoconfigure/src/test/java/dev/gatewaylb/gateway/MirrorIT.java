package dev.gatewaylb.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.gatewaylb.internal.mirror.MirrorState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Traffic mirroring on real sockets: the client never waits for the shadow nor sees its
 * answers, the shadow never holds more than {@code max-concurrent}, its failures are
 * charged to nobody of the primary's, bodies are compared exactly, and a mirrored POST's
 * body reaches the shadow whole and once.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class MirrorIT extends GatewayIntegrationTest {

	/**
	 * The paths whose answer the shadow gets wrong: a seeded 3% of 1,000.
	 */
	static final Set<String> DIFFERING = differing();

	/**
	 * The mirrored service's max-concurrent. What mirroring costs the primary's latency
	 * is a target of the load benchmarks ({@code run.sh mirror}, docs/benchmarks.md), not
	 * of this test.
	 */
	static final int MAX_CONCURRENT = 16;

	static final TestBackend primary = TestBackend.start("primary");

	static final TestBackend slowShadow = TestBackend.start("slow-shadow");

	static final TestBackend failingShadow = TestBackend.start("failing-shadow");

	static final SocketBackend resettingShadow = new SocketBackend("resetting-shadow", (socket) -> {
		try {
			socket.setSoLinger(true, 0);
			socket.getInputStream().read();
			socket.close();
		}
		catch (IOException ex) {
			// closed
		}
	});

	static final List<String> bodiesSeen = new CopyOnWriteArrayList<>();

	@Autowired
	MeterRegistry meters;

	static final DisposableServer pathPrimary = TestBackend.bind(HttpServer.create()
		.host("127.0.0.1")
		.handle((request, response) -> request.receive()
			.aggregate()
			.asString()
			.defaultIfEmpty("")
			.flatMap((body) -> response.header("X-Backend", "path-primary")
				.sendString(Mono.just("answer of " + request.fullPath()))
				.then())));

	static final DisposableServer pathShadow = TestBackend.bind(HttpServer.create()
		.host("127.0.0.1")
		.handle((request, response) -> request.receive().aggregate().asString().defaultIfEmpty("").flatMap((body) -> {
			if (!body.isEmpty()) {
				bodiesSeen.add(body);
			}
			String path = request.fullPath();
			String answer = DIFFERING.contains(path) ? "another answer of " + path : "answer of " + path;
			return response.sendString(Mono.just(answer)).then();
		})));

	/**
	 * The headers of each request the header shadow got.
	 */
	static final Queue<io.netty.handler.codec.http.HttpHeaders> shadowHeaders = new ConcurrentLinkedQueue<>();

	static final DisposableServer headerShadow = TestBackend
		.bind(HttpServer.create().host("127.0.0.1").handle((request, response) -> {
			shadowHeaders.add(request.requestHeaders().copy());
			return response.sendString(Mono.just("ok")).then();
		}));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway gateway = TestGateway.properties(registry);
		gateway.route("plain").instances("plain", List.of(primary));
		gateway.route("mirrored")
			.instances("mirrored", List.of(primary))
			.set("gateway.lb.services.mirrored.mirror.target", "slow-shadow")
			.set("gateway.lb.services.mirrored.mirror.max-concurrent", MAX_CONCURRENT);
		gateway.instances("slow-shadow", List.of(slowShadow));
		gateway.route("failing")
			.instances("failing", List.of(primary))
			.set("gateway.lb.services.failing.mirror.target", "failing-shadow")
			.set("gateway.lb.services.failing.health.passive.consecutive-failures", 1);
		gateway.instances("failing-shadow", List.of(failingShadow));
		gateway.route("resetting")
			.instances("resetting", List.of(primary))
			.set("gateway.lb.services.resetting.mirror.target", "resetting-shadow")
			.set("gateway.lb.services.resetting.health.passive.consecutive-failures", 1)
			.uris("resetting-shadow", List.of("http://127.0.0.1:" + resettingShadow.port()));
		for (String compare : List.of("body", "status")) {
			String service = "compared-" + compare;
			gateway.route(service)
				.uris(service, List.of("http://127.0.0.1:" + pathPrimary.port()))
				.set("gateway.lb.services." + service + ".mirror.target", "path-shadow")
				.set("gateway.lb.services." + service + ".mirror.compare", compare);
		}
		// Services of their own for the tests that count every comparison they cause.
		gateway.route("left")
			.uris("left", List.of("http://127.0.0.1:" + pathPrimary.port()))
			.set("gateway.lb.services.left.mirror.target", "path-shadow")
			.set("gateway.lb.services.left.mirror.compare", "body");
		gateway.route("posted-often")
			.uris("posted-often", List.of("http://127.0.0.1:" + pathPrimary.port()))
			.set("gateway.lb.services.posted-often.mirror.target", "path-shadow")
			.set("gateway.lb.services.posted-often.mirror.methods", "POST");
		gateway.route("observed")
			.uris("observed", List.of("http://127.0.0.1:" + pathPrimary.port()))
			.set("gateway.lb.services.observed.mirror.target", "path-shadow");
		gateway.route("posted")
			.uris("posted", List.of("http://127.0.0.1:" + pathPrimary.port()))
			.set("gateway.lb.services.posted.mirror.target", "path-shadow")
			.set("gateway.lb.services.posted.mirror.methods", "GET,POST");
		gateway.route("unposted")
			.uris("unposted", List.of("http://127.0.0.1:" + pathPrimary.port()))
			.set("gateway.lb.services.unposted.mirror.target", "path-shadow");
		gateway.uris("path-shadow", List.of("http://127.0.0.1:" + pathShadow.port()));
		gateway.route("credentialed")
			.instances("credentialed", List.of(primary))
			.set("gateway.lb.services.credentialed.mirror.target", "header-shadow");
		gateway.route("keyed")
			.instances("keyed", List.of(primary))
			.set("gateway.lb.services.keyed.mirror.target", "header-shadow")
			.set("gateway.lb.services.keyed.mirror.strip-headers", "X-Api-Key");
		gateway.uris("header-shadow", List.of("http://127.0.0.1:" + headerShadow.port()));
		// No endpoint: the primary answers 503 before it reads the body the
		// mirror waits for.
		gateway.route("nowhere")
			.set("gateway.lb.services.nowhere.mirror.target", "path-shadow")
			.set("gateway.lb.services.nowhere.mirror.methods", "POST");
	}

	@AfterAll
	static void stopBackends() throws IOException {
		List.of(primary, slowShadow, failingShadow).forEach(TestBackend::close);
		resettingShadow.close();
		pathPrimary.disposeNow();
		pathShadow.disposeNow();
		headerShadow.disposeNow();
	}

	@Test
	void theShadowGetsNoneOfTheClientsCredentialsAndKnowsItGetsACopy() {
		ready("header-shadow");
		ready("credentialed");
		ready("keyed");
		Map<String, String> sent = Map.of("Authorization", "Bearer client-token", "Cookie", "session=client",
				"Proxy-Authorization", "Basic cHJveHk6cHc=", "X-Api-Key", "k1", "X-Request-Tag", "t1");
		shadowHeaders.clear();
		primary.reset();
		assertThat(this.client.getNow("/credentialed/", sent).status()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(10)).until(() -> shadowHeaders.size() == 1);
		io.netty.handler.codec.http.HttpHeaders copy = shadowHeaders.poll();
		assertThat(copy.contains("Authorization")).as("Authorization").isFalse();
		assertThat(copy.contains("Cookie")).as("Cookie").isFalse();
		assertThat(copy.contains("Proxy-Authorization")).as("Proxy-Authorization").isFalse();
		assertThat(copy.get("X-Api-Key")).isEqualTo("k1");
		assertThat(copy.get("X-Request-Tag")).isEqualTo("t1");
		assertThat(copy.get("X-Gateway-Mirror")).isEqualTo("credentialed");
		assertThat(primary.sawHeader("Authorization")).as("the primary gets them").isTrue();
		assertThat(primary.sawHeader("X-Gateway-Mirror")).isFalse();
		// A list given replaces the default.
		assertThat(this.client.getNow("/keyed/", sent).status()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(10)).until(() -> shadowHeaders.size() == 1);
		copy = shadowHeaders.poll();
		assertThat(copy.contains("X-Api-Key")).isFalse();
		assertThat(copy.get("Authorization")).isEqualTo("Bearer client-token");
		assertThat(copy.get("X-Gateway-Mirror")).isEqualTo("keyed");
	}

	@Test
	void theClientNeverWaitsForAShadowThatHoldsItsRequestsWhichNeverHoldsMoreThanMaxConcurrent() {
		// The shadow known first: a request that finds it not yet discovered is dropped.
		ready("slow-shadow");
		MirrorState state = ready("mirrored").feature(MirrorState.class);
		long droppedBefore = state.droppedCounter().sum();
		long matchedBefore = state.matchedCounter().sum();
		slowShadow.reset();
		// The shadow answers nothing until the test says so: an answer that reaches the
		// client meanwhile did not wait for it.
		slowShadow.hold();
		try {
			int requests = MAX_CONCURRENT + 8;
			for (int i = 0; i < requests; i++) {
				GatewayClient.Answer answer = this.client.get("/mirrored/m" + i, Map.of())
					.block(Duration.ofSeconds(10));
				assertThat(answer.status()).as("request %d", i).isEqualTo(200);
				assertThat(answer.backend()).isEqualTo("primary");
			}
			// A place is taken when the request arrives and given back when the shadow
			// answers: the first MAX_CONCURRENT have one, the others are dropped.
			await().atMost(Duration.ofSeconds(10)).until(() -> slowShadow.held() == MAX_CONCURRENT);
			assertThat(state.inFlight()).as("mirrors in flight").isEqualTo(MAX_CONCURRENT);
			assertThat(state.droppedCounter().sum() - droppedBefore).as("dropped").isEqualTo(requests - MAX_CONCURRENT);
			assertThat(state.matchedCounter().sum() - matchedBefore).as("compared while the shadow holds").isZero();
			assertThat(this.client.getNow("/mirrored/while-held").status()).isEqualTo(200);
			assertThat(slowShadow.requests()).as("requests the shadow got").isEqualTo(MAX_CONCURRENT);
		}
		finally {
			slowShadow.release();
		}
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(new long[] { state.matchedCounter().sum() - matchedBefore, state.inFlight(),
					inFlight("slow-shadow") })
				.as("compared, mirrors in flight, the shadow's requests in flight")
				.containsExactly(MAX_CONCURRENT, 0, 0));
		assertThat(slowShadow.maxActive()).as("shadow's requests in flight at most").isEqualTo(MAX_CONCURRENT);
	}

	@Test
	void aShadowThatFailsOrResetsIsNeverSeenByTheClientNorChargedToThePrimary() {
		failingShadow.failEvery(1);
		for (String path : List.of("/failing/", "/resetting/")) {
			for (int i = 0; i < 20; i++) {
				GatewayClient.Answer answer = this.client.getNow(path);
				assertThat(answer.status()).as(path).isEqualTo(200);
				assertThat(answer.backend()).isEqualTo("primary");
			}
		}
		String address = "127.0.0.1:" + primary.port();
		for (String service : List.of("failing", "resetting")) {
			assertThat(state(service, address).consecutiveFailures()).as(service).isZero();
			assertThat(isPickable(service, address)).isTrue();
		}
		MirrorState failing = ready("failing").feature(MirrorState.class);
		MirrorState resetting = ready("resetting").feature(MirrorState.class);
		await().atMost(Duration.ofSeconds(5))
			.until(() -> failing.mismatchedCounter().sum() == 20 && resetting.failedCounter().sum() == 20);
		assertThat(failing.recent()).allSatisfy((mismatch) -> {
			assertThat(mismatch.primaryStatus()).isEqualTo(200);
			assertThat(mismatch.shadowStatus()).isEqualTo(500);
		});
		// The shadows' own endpoints are charged, as any request would charge them.
		var resets = state("resetting-shadow", "127.0.0.1:" + resettingShadow.port());
		assertThat(resets.ejections() + resets.consecutiveFailures()).isPositive();
		var fails = state("failing-shadow", "127.0.0.1:" + failingShadow.port());
		assertThat(fails.ejections() + fails.consecutiveFailures()).as("500s charged to the shadow's endpoint")
			.isPositive();
	}

	@Test
	void aBodyThatDiffersIsAMismatchExactlyWhenBodiesAreCompared() {
		for (int i = 0; i < 1_000; i++) {
			assertThat(this.client.getNow("/compared-body/p" + i).status()).isEqualTo(200);
			assertThat(this.client.getNow("/compared-status/p" + i).status()).isEqualTo(200);
		}
		MirrorState body = ready("compared-body").feature(MirrorState.class);
		MirrorState status = ready("compared-status").feature(MirrorState.class);
		await().atMost(Duration.ofSeconds(10))
			.until(() -> body.mismatchedCounter().sum() + body.matchedCounter().sum() == 1_000
					&& status.matchedCounter().sum() == 1_000);
		assertThat(body.mismatchedCounter().sum()).isEqualTo(DIFFERING.size());
		assertThat(body.recent()).hasSize(MirrorState.RECENT)
			.allSatisfy((mismatch) -> assertThat(DIFFERING).contains(mismatch.path()));
		assertThat(status.mismatchedCounter().sum()).isZero();
		assertThat(body.failedCounter().sum() + status.failedCounter().sum()).isZero();
	}

	@Test
	void aPostIsMirroredOnlyWhenItsMethodIsNamedAndItsBodyArrivesWholeOnce() {
		String body = "{\"order\":" + "x".repeat(10_000) + "}";
		bodiesSeen.clear();
		assertThat(this.client.send("POST", "/unposted/orders", body).status()).isEqualTo(200);
		assertThat(this.client.send("POST", "/posted/orders", body).status()).isEqualTo(200);
		MirrorState posted = ready("posted").feature(MirrorState.class);
		await().atMost(Duration.ofSeconds(5)).until(() -> posted.matchedCounter().sum() == 1);
		assertThat(bodiesSeen).containsExactly(body);
		assertThat(ready("unposted").feature(MirrorState.class).matchedCounter().sum()).isZero();
	}

	@Test
	void aMirrorWaitingForABodyThePrimaryNeverReadsGivesItsPlaceBack() {
		for (int i = 0; i < 70; i++) {
			assertThat(this.client.send("POST", "/nowhere/orders", "{\"order\":1}").status()).isEqualTo(503);
		}
		MirrorState state = ready("nowhere").feature(MirrorState.class);
		await().atMost(Duration.ofSeconds(5)).until(() -> state.failedCounter().sum() == 70);
		assertThat(state.inFlight()).isZero();
		assertThat(state.droppedCounter().sum()).as("more than max-concurrent of them, none dropped").isZero();
	}

	/**
	 * A client that has its whole answer by its Content-Length and closes its connection
	 * at once (a curl in a loop does) has had a whole answer: its mirror is compared, not
	 * counted as an error. The exchange then ends, by the writer's cancellation, before
	 * the upstream body's completion reaches the gateway's watcher; a mirror counted
	 * {@code error} here had both answers.
	 */
	@Test
	void aClientThatLeavesOnceItHasItsWholeAnswerHasItsAnswerCompared() throws IOException {
		int requests = 400;
		// The shadow known first: a request that finds it not yet discovered is dropped.
		ready("path-shadow");
		for (int i = 0; i < requests; i++) {
			String body = getWholeThenClose("/left/r" + i);
			assertThat(body).isEqualTo("answer of /r" + i);
		}
		MirrorState state = ready("left").feature(MirrorState.class);
		await().atMost(Duration.ofSeconds(10))
			.until(() -> state.matchedCounter().sum() + state.mismatchedCounter().sum()
					+ state.failedCounter().sum() == requests);
		assertThat(state.failedCounter().sum()).as("whole answers counted as errors").isZero();
		assertThat(state.matchedCounter().sum()).isEqualTo(requests);
	}

	/**
	 * Every mirrored POST reaches the shadow, whole, once: the upstream client cancels
	 * the request body it has sent whole once the primary's answer has ended, which can
	 * come before the body's completion reaches the copy.
	 */
	@Test
	void everyMirroredPostReachesTheShadowWholeOnce() {
		String body = "{\"often\":" + "y".repeat(10_000) + "}";
		int requests = 200;
		ready("path-shadow");
		for (int i = 0; i < requests; i++) {
			assertThat(this.client.send("POST", "/posted-often/orders", body).status()).isEqualTo(200);
		}
		MirrorState state = ready("posted-often").feature(MirrorState.class);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(new long[] { state.matchedCounter().sum(), state.mismatchedCounter().sum(),
					state.failedCounter().sum(), state.droppedCounter().sum(), state.inFlight() })
				.as("matched, mismatched, failed, dropped, in flight")
				.containsExactly(requests, 0, 0, 0, 0));
		assertThat(bodiesSeen.stream().filter(body::equals).count()).as("bodies the shadow got whole")
			.isEqualTo(requests);
	}

	/**
	 * The mirror's headers leave no {@code http.client.requests} observation running: the
	 * gateway's header filters start one for every request they filter, which only the
	 * primary's answer stops.
	 */
	@Test
	void aMirroredRequestLeavesNoClientObservationRunning() {
		int requests = 50;
		long timedBefore = clientRequestsTimed();
		int activeBefore = activeClientRequests();
		ready("path-shadow");
		for (int i = 0; i < requests; i++) {
			assertThat(this.client.getNow("/observed/o" + i).status()).isEqualTo(200);
		}
		MirrorState state = ready("observed").feature(MirrorState.class);
		await().atMost(Duration.ofSeconds(10)).until(() -> state.matchedCounter().sum() == requests);
		assertThat(clientRequestsTimed() - timedBefore).as("upstream requests observed (the primaries')")
			.isEqualTo(requests);
		assertThat(activeClientRequests() - activeBefore).as("http.client.requests still active").isZero();
	}

	private int activeClientRequests() {
		return this.meters.find("http.client.requests.active")
			.longTaskTimers()
			.stream()
			.mapToInt(LongTaskTimer::activeTasks)
			.sum();
	}

	private long clientRequestsTimed() {
		return this.meters.find("http.client.requests").timers().stream().mapToLong(Timer::count).sum();
	}

	/**
	 * Sends a GET on a connection of its own, reads the answer's head and exactly the
	 * bytes its Content-Length declares, and closes the connection at once.
	 */
	private String getWholeThenClose(String path) throws IOException {
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			socket.setSoTimeout(10_000);
			socket.getOutputStream()
				.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
			InputStream in = socket.getInputStream();
			StringBuilder head = new StringBuilder();
			while (head.length() < 4 || head.lastIndexOf("\r\n\r\n") != head.length() - 4) {
				int read = in.read();
				assertThat(read).as("the answer's head").isNotNegative();
				head.append((char) read);
			}
			int length = -1;
			for (String line : head.toString().split("\r\n")) {
				if (line.regionMatches(true, 0, "Content-Length:", 0, 15)) {
					length = Integer.parseInt(line.substring(15).trim());
				}
			}
			assertThat(length).as(head.toString()).isPositive();
			return new String(in.readNBytes(length), StandardCharsets.US_ASCII);
		}
	}

	private static Set<String> differing() {
		SplittableRandom random = new SplittableRandom(26);
		Set<String> paths = new HashSet<>();
		while (paths.size() < 30) {
			paths.add("/p" + random.nextInt(1_000));
		}
		return Set.copyOf(paths);
	}

}
