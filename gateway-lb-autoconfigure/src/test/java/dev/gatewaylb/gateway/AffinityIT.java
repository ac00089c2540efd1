package dev.gatewaylb.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.gatewaylb.internal.runtime.Drain;
import dev.gatewaylb.internal.affinity.AffinityState;
import dev.gatewaylb.internal.actuate.GatewayLbEndpoint;
import dev.gatewaylb.actuate.GatewayLbReport;
import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.affinity.AffinityOutcome;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.runtime.ServiceRuntimes;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Sticky sessions to an endpoint through three gateway replicas that share one secret: a
 * session's requests reach one endpoint whichever replica takes them, a scale-out moves
 * none of them (where consistent hashing on a cookie moves about a sixth), a drained
 * endpoint keeps its sessions and gets no new one, a forged cookie is ignored and
 * counted, a cookie of the previous secret is followed, and {@code learn} follows the
 * application's own session cookie.
 */
class AffinityIT {

	static final String SECRET = "the affinity secret, 32 bytes or more";

	static final String OLD_SECRET = "the secret before the rotation, 32+ bytes";

	static final String COOKIE = "GWLB_EP";

	static final int REPLICAS = 3;

	/**
	 * The instances of each service, which the test changes; every replica reads them.
	 */
	static final Map<String, List<ServiceInstance>> instances = new ConcurrentHashMap<>();

	static final List<TestBackend> backends = new ArrayList<>();

	static DisposableServer sessionBackend;

	static final List<ConfigurableApplicationContext> replicas = new ArrayList<>();

	static final List<GatewayClient> clients = new ArrayList<>();

	@BeforeAll
	static void start() {
		for (int i = 0; i < 8; i++) {
			backends.add(TestBackend.start("b" + i));
		}
		sessionBackend = TestBackend.bind(HttpServer.create().host("127.0.0.1").handle((request, response) -> {
			response.header("X-Backend", "session");
			if (request.uri().startsWith("/login")) {
				response.header("Set-Cookie", "JSESSIONID=s" + System.nanoTime() + "; Path=/; HttpOnly");
			}
			else if (request.uri().startsWith("/logout")) {
				response.header("Set-Cookie", "JSESSIONID=; Max-Age=0; Path=/");
			}
			return response.sendString(Mono.just("session"));
		}));
		for (String service : List.of("sticky", "scale", "scalehash", "forge", "drained", "rotated")) {
			instances.put(service, new CopyOnWriteArrayList<>(instancesOf(service, backends.subList(0, 5))));
		}
		instances.put("copied", new CopyOnWriteArrayList<>(instancesOf("copied", backends.subList(5, 8))));
		instances.put("app", new CopyOnWriteArrayList<>(
				List.of(new DefaultServiceInstance("app-0", "app", "127.0.0.1", sessionBackend.port(), false))));
		for (int i = 0; i < REPLICAS; i++) {
			ConfigurableApplicationContext replica = replica();
			replicas.add(replica);
			clients.add(new GatewayClient(((WebServerApplicationContext) replica).getWebServer().getPort()));
		}
		for (String service : instances.keySet()) {
			awaitEndpoints(service, instances.get(service).size());
		}
	}

	@AfterAll
	static void stop() {
		clients.forEach(GatewayClient::close);
		// The backends before the replicas: a replica that closes can take Reactor
		// Netty's global event loops with it (Spring's resource factory disposes them
		// when it uses them), and a backend's socket on them could then not be closed.
		backends.forEach(TestBackend::close);
		sessionBackend.disposeNow();
		replicas.forEach(ConfigurableApplicationContext::close);
	}

	@AfterEach
	void nothingIsLeftInFlight() {
		for (ConfigurableApplicationContext replica : replicas) {
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> replica.getBean(ServiceRuntimes.class).snapshots().values().forEach((snapshot) -> {
					for (int i = 0; i < snapshot.size(); i++) {
						assertThat(snapshot.state(i).inFlight()).as(snapshot.state(i).address()).isZero();
					}
				}));
		}
	}

	@Test
	void everyRequestOfASessionReachesOneEndpointWhicheverReplicaTakesIt() {
		SplittableRandom random = new SplittableRandom(25);
		Map<Integer, Set<String>> endpointsBySession = new ConcurrentHashMap<>();
		Map<Integer, String> cookies = new ConcurrentHashMap<>();
		long followedBefore = count("sticky", AffinityOutcome.FOLLOWED);
		long startedBefore = count("sticky", AffinityOutcome.NEW);
		int[] replicaOf = new int[200 * 10];
		for (int i = 0; i < replicaOf.length; i++) {
			replicaOf[i] = random.nextInt(REPLICAS);
		}
		Flux.range(0, 200).flatMap((session) -> Flux.range(0, 10).concatMap((request) -> {
			String cookie = cookies.get(session);
			Map<String, String> headers = (cookie != null) ? Map.of("Cookie", COOKIE + "=" + cookie) : Map.of();
			return clients.get(replicaOf[session * 10 + request]).get("/sticky/", headers).doOnNext((answer) -> {
				assertThat(answer.status()).isEqualTo(200);
				endpointsBySession.computeIfAbsent(session, (s) -> ConcurrentHashMap.newKeySet()).add(answer.backend());
				String issued = affinityCookie(answer);
				if (issued != null) {
					cookies.put(session, issued);
				}
			});
		}), 16).blockLast(Duration.ofSeconds(60));
		assertThat(endpointsBySession).hasSize(200);
		assertThat(endpointsBySession.values()).allSatisfy((reached) -> assertThat(reached).hasSize(1));
		Set<String> used = new HashSet<>();
		endpointsBySession.values().forEach(used::addAll);
		assertThat(used).as("sessions spread over the endpoints").hasSize(5);
		assertThat(count("sticky", AffinityOutcome.NEW) - startedBefore).isEqualTo(200);
		assertThat(count("sticky", AffinityOutcome.FOLLOWED) - followedBefore).isEqualTo(200 * 9);
		assertThat(count("sticky", AffinityOutcome.MOVED) + count("sticky", AffinityOutcome.REJECTED)).isZero();
	}

	@Test
	void aScaleOutMovesNoSessionWhereConsistentHashingMovesAboutASixthAndARemovalOnlyThoseOfTheEndpoint() {
		int sessions = 600;
		Map<Integer, String> cookies = new HashMap<>();
		Map<Integer, String> stickyBefore = new HashMap<>();
		Map<Integer, String> hashedBefore = new HashMap<>();
		for (int session = 0; session < sessions; session++) {
			GatewayClient.Answer answer = clients.get(session % REPLICAS).getNow("/scale/");
			cookies.put(session, affinityCookie(answer));
			stickyBefore.put(session, answer.backend());
			hashedBefore.put(session,
					clients.get(session % REPLICAS)
						.getNow("/scalehash/", Map.of("Cookie", "SID=session-" + session))
						.backend());
		}
		// Scale out 5 -> 6, as discovery tells every replica.
		addInstance("scale", backends.get(5));
		addInstance("scalehash", backends.get(5));
		awaitEndpoints("scale", 6);
		awaitEndpoints("scalehash", 6);
		int stickyMoved = 0;
		int hashedMoved = 0;
		int newEndpoint = 0;
		for (int session = 0; session < sessions; session++) {
			GatewayClient.Answer answer = clients.get((session + 1) % REPLICAS)
				.getNow("/scale/", Map.of("Cookie", COOKIE + "=" + cookies.get(session)));
			stickyMoved += answer.backend().equals(stickyBefore.get(session)) ? 0 : 1;
			assertThat(affinityCookie(answer)).as("a followed session gets no new cookie").isNull();
			String hashed = clients.get((session + 1) % REPLICAS)
				.getNow("/scalehash/", Map.of("Cookie", "SID=session-" + session))
				.backend();
			hashedMoved += hashed.equals(hashedBefore.get(session)) ? 0 : 1;
			newEndpoint += "b5".equals(hashed) ? 1 : 0;
		}
		System.out.printf("affinity scale-out 5 -> 6: %d of %d sessions moved; consistent hashing on the cookie: %d"
				+ " moved (%d to the new endpoint)%n", stickyMoved, sessions, hashedMoved, newEndpoint);
		assertThat(stickyMoved).as("sessions moved by the scale-out").isZero();
		// Ketama moves the keys of the new endpoint's arcs, 1/6 on average; an
		// endpoint's share of 160 points per weight spreads by about 8%, so a sixth of
		// 600 is 100 give or take 8 and the binomial spread, 9: 4 sigmas either way.
		assertThat(hashedMoved).as("sessions moved by consistent hashing").isBetween(60, 140);
		assertThat(newEndpoint).isEqualTo(hashedMoved);

		// Remove b2: only its sessions move, each once, and get a new cookie.
		removeInstance("scale", backends.get(2));
		awaitEndpoints("scale", 5);
		long movedBefore = count("scale", AffinityOutcome.MOVED);
		int ofRemoved = 0;
		for (int session = 0; session < sessions; session++) {
			GatewayClient.Answer answer = clients.get(session % REPLICAS)
				.getNow("/scale/", Map.of("Cookie", COOKIE + "=" + cookies.get(session)));
			if ("b2".equals(stickyBefore.get(session))) {
				ofRemoved++;
				assertThat(answer.backend()).isNotEqualTo("b2");
				assertThat(affinityCookie(answer)).as("a moved session's new cookie").isNotNull();
			}
			else {
				assertThat(answer.backend()).as("session %d", session).isEqualTo(stickyBefore.get(session));
			}
		}
		assertThat(ofRemoved).isPositive();
		assertThat(count("scale", AffinityOutcome.MOVED) - movedBefore).isEqualTo(ofRemoved);
	}

	@Test
	void aForgedCookieIsIgnoredAndCountedAndOneOfThePreviousSecretIsFollowed() {
		GatewayClient client = clients.get(0);
		Snapshot<Member> snapshot = runtime(0, "forge").snapshot();
		EndpointCookie current = signer("forge", SECRET);
		String ofB1 = current.sign(snapshot.id(indexOf(snapshot, backends.get(1))));
		String ofB3 = current.sign(snapshot.id(indexOf(snapshot, backends.get(3))));
		assertThat(client.getNow("/forge/", Map.of("Cookie", COOKIE + "=" + ofB3)).backend()).isEqualTo("b3");
		// b1's block with b3's MAC: a client that wants b1 cannot forge its way there.
		String forged = ofB1.substring(0, 22) + ofB3.substring(22);
		long rejectedBefore = count("forge", AffinityOutcome.REJECTED);
		int toB1 = 0;
		for (int i = 0; i < 20; i++) {
			GatewayClient.Answer answer = client.getNow("/forge/", Map.of("Cookie", COOKIE + "=" + forged));
			assertThat(answer.status()).isEqualTo(200);
			assertThat(affinityCookie(answer)).as("a fresh cookie for the endpoint picked").isNotNull();
			toB1 += "b1".equals(answer.backend()) ? 1 : 0;
		}
		assertThat(toB1).as("round-robin's share, not the forged endpoint's").isLessThanOrEqualTo(4);
		assertThat(count("forge", AffinityOutcome.REJECTED) - rejectedBefore).isEqualTo(20);
		// Garbage, another service's cookie: ignored alike, never an error.
		String ofAnotherService = signer("sticky", SECRET).sign(snapshot.id(indexOf(snapshot, backends.get(1))));
		for (String cookie : List.of(ofAnotherService, "x", "\"" + ofB1 + "\"x", ofB1 + ofB1, "%00%ff")) {
			assertThat(client.getNow("/forge/", Map.of("Cookie", COOKIE + "=" + cookie)).status()).isEqualTo(200);
		}
		assertThat(count("forge", AffinityOutcome.REJECTED) - rejectedBefore).isEqualTo(25);
		// Signed with the secret before the rotation, which previous-secrets still
		// accepts: followed, on every replica.
		String old = signer("forge", OLD_SECRET).sign(snapshot.id(indexOf(snapshot, backends.get(1))));
		for (GatewayClient replica : clients) {
			GatewayClient.Answer answer = replica.getNow("/forge/", Map.of("Cookie", COOKIE + "=" + old));
			assertThat(answer.backend()).isEqualTo("b1");
			assertThat(endpointOf(current, affinityCookie(answer)))
				.as("followed, and signed again with the current secret")
				.isEqualTo(snapshot.id(indexOf(snapshot, backends.get(1))));
		}
	}

	@Test
	void oneCookieCopiedToManyClientsPutsAtMostTwiceTheAverageInFlightOnItsEndpoint() {
		List<TestBackend> copied = backends.subList(5, 8);
		GatewayClient client = clients.get(0);
		GatewayClient.Answer first = client.getNow("/copied/");
		String cookie = affinityCookie(first);
		TestBackend followed = copied.stream()
			.filter((b) -> b.name().equals(first.backend()))
			.findFirst()
			.orElseThrow();
		long movedBefore = count("copied", AffinityOutcome.MOVED);
		List<java.util.concurrent.CompletableFuture<GatewayClient.Answer>> answers = new ArrayList<>();
		copied.forEach(TestBackend::hold);
		int onFollowed;
		try {
			// 64 clients with the one cookie, one after another, every request held.
			for (int i = 0; i < 64; i++) {
				answers.add(client.get("/copied/", Map.of("Cookie", COOKIE + "=" + cookie)).toFuture());
				int sent = i + 1;
				await().atMost(Duration.ofSeconds(10))
					.until(() -> copied.stream().mapToInt(TestBackend::held).sum() == sent);
			}
			onFollowed = followed.held();
		}
		finally {
			copied.forEach(TestBackend::release);
		}
		// A request follows while its endpoint holds fewer than 2 x (T + 1) / 3 of the T
		// in flight; one that moves goes where round-robin sends it, that endpoint too
		// now and then. 43 is ceil(2 x 64 / 3).
		System.out.printf("affinity: one cookie, 64 clients: %d on the followed endpoint (average %.1f)%n", onFollowed,
				64 / 3.0);
		assertThat(onFollowed).as("on the endpoint the cookie names").isBetween(40, 43);
		assertThat(answers).allSatisfy((answer) -> assertThat(answer.join().status()).isEqualTo(200));
		assertThat(count("copied", AffinityOutcome.MOVED) - movedBefore).as("moved past the bound")
			.isGreaterThanOrEqualTo(64 - onFollowed);
	}

	@Test
	void sessionsOfThePreviousSecretStayOnTheirEndpointsThroughTheRotation() {
		// 100 sessions with cookies of the secret before the rotation, 3 requests each on
		// one replica, 10 at a time; each keeps what Set-Cookie gave it, as a cookie jar
		// does. The first request is followed and signed again with the current secret,
		// the others follow that. Then the same with both cookies on the Cookie line, the
		// old one first (a jar that kept it under another path or domain).
		Snapshot<Member> snapshot = runtime(0, "rotated").snapshot();
		EndpointCookie old = signer("rotated", OLD_SECRET);
		EndpointCookie current = signer("rotated", SECRET);
		for (boolean bothOnTheLine : List.of(false, true)) {
			long followedBefore = count("rotated", AffinityOutcome.FOLLOWED);
			int sessions = 100;
			Map<Integer, String> sent = new ConcurrentHashMap<>();
			Map<Integer, List<String>> reached = new ConcurrentHashMap<>();
			for (int session = 0; session < sessions; session++) {
				sent.put(session, COOKIE + "=" + old.sign(snapshot.id(indexOf(snapshot, backends.get(session % 5)))));
			}
			Flux.range(0, sessions)
				.flatMap((session) -> Flux.range(0, 3)
					.concatMap((request) -> clients.get(0)
						.get("/rotated/", Map.of("Cookie", sent.get(session)))
						.doOnNext((answer) -> {
							reached.computeIfAbsent(session, (s) -> new CopyOnWriteArrayList<>()).add(answer.backend());
							String issued = affinityCookie(answer);
							long id = snapshot.id(indexOf(snapshot, backends.get(session % 5)));
							if (request == 0) {
								assertThat(endpointOf(current, issued)).as("signed again with the current secret")
									.isEqualTo(id);
								String jar = COOKIE + "=" + issued;
								sent.put(session, bothOnTheLine ? sent.get(session) + "; " + jar : jar);
							}
							else if (bothOnTheLine) {
								// The first pair of the name is the one followed: the old
								// one, signed again on every answer.
								assertThat(endpointOf(current, issued)).isEqualTo(id);
							}
							else {
								assertThat(issued).as("a followed session gets no new cookie").isNull();
							}
						})), 10)
				.blockLast(Duration.ofSeconds(60));
			for (int session = 0; session < sessions; session++) {
				assertThat(reached.get(session)).as("session %d", session).containsOnly("b" + (session % 5)).hasSize(3);
			}
			assertThat(count("rotated", AffinityOutcome.FOLLOWED) - followedBefore).isEqualTo(sessions * 3);
		}
		assertThat(count("rotated", AffinityOutcome.MOVED) + count("rotated", AffinityOutcome.REJECTED)
				+ count("rotated", AffinityOutcome.NEW))
			.isZero();
	}

	@Test
	void aDrainedEndpointKeepsItsSessionsAndGetsNoNewOne() {
		Map<Integer, String> cookies = new HashMap<>();
		Map<Integer, String> endpoints = new HashMap<>();
		for (int session = 0; session < 50; session++) {
			GatewayClient.Answer answer = clients.get(session % REPLICAS).getNow("/drained/");
			cookies.put(session, affinityCookie(answer));
			endpoints.put(session, answer.backend());
		}
		String address = "127.0.0.1:" + backends.get(0).port();
		for (ConfigurableApplicationContext replica : replicas) {
			assertThat(replica.getBean(ServiceRuntimes.class).drain("drained", address, true, false))
				.isEqualTo(Drain.DONE);
		}
		int ofDrained = 0;
		for (int round = 0; round < 3; round++) {
			for (int session = 0; session < 50; session++) {
				GatewayClient.Answer answer = clients.get((session + round) % REPLICAS)
					.getNow("/drained/", Map.of("Cookie", COOKIE + "=" + cookies.get(session)));
				assertThat(answer.backend()).as("session %d", session).isEqualTo(endpoints.get(session));
				ofDrained += "b0".equals(answer.backend()) ? 1 : 0;
			}
		}
		assertThat(ofDrained).as("requests of the drained endpoint's sessions").isPositive();
		for (int session = 0; session < 100; session++) {
			assertThat(clients.get(session % REPLICAS).getNow("/drained/").backend()).as("a new session")
				.isNotEqualTo("b0");
		}
		// The actuator names the drained endpoint as one that sessions still follow,
		// once the minute's window has moved on.
		await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
			GatewayLbReport.ServiceReport report = (GatewayLbReport.ServiceReport) replicas.get(0)
				.getBean(GatewayLbEndpoint.class)
				.one("drained", SecurityContext.NONE);
			assertThat(report.affinity().drainingWithSessions()).containsExactly(address);
			assertThat(report.endpoints().stream().filter((endpoint) -> endpoint.address().equals(address)))
				.singleElement()
				.satisfies((endpoint) -> assertThat(endpoint.followedLastMinute()).isPositive());
		});
	}

	@Test
	void withLearnTheCookieComesWithTheApplicationsSessionAndGoesWithIt() {
		GatewayClient client = clients.get(0);
		GatewayClient.Answer anonymous = client.getNow("/app/");
		assertThat(anonymous.status()).isEqualTo(200);
		assertThat(affinityCookie(anonymous)).as("no session yet: no affinity cookie").isNull();
		GatewayClient.Answer login = client.getNow("/app/login");
		String cookie = affinityCookie(login);
		assertThat(cookie).as("the upstream set JSESSIONID").isNotNull();
		assertThat(login.setCookies()).anySatisfy((line) -> assertThat(line).startsWith("JSESSIONID="));
		GatewayClient.Answer followed = clients.get(1).getNow("/app/", Map.of("Cookie", COOKIE + "=" + cookie));
		assertThat(affinityCookie(followed)).isNull();
		assertThat(count("app", AffinityOutcome.FOLLOWED)).isPositive();
		GatewayClient.Answer logout = clients.get(2).getNow("/app/logout", Map.of("Cookie", COOKIE + "=" + cookie));
		assertThat(logout.setCookies()).as("the affinity cookie expired with the session")
			.anySatisfy((line) -> assertThat(line).startsWith(COOKIE + "=;").containsIgnoringCase("Max-Age=0"));
	}

	/**
	 * Returns the value of the affinity cookie an answer sets, or {@code null}.
	 */
	private static @Nullable String affinityCookie(GatewayClient.Answer answer) {
		for (String line : answer.setCookies()) {
			if (line.startsWith(COOKIE + "=")) {
				int end = line.indexOf(';');
				String value = line.substring(COOKIE.length() + 1, (end < 0) ? line.length() : end);
				return value.isEmpty() ? null : value;
			}
		}
		return null;
	}

	/**
	 * Returns an affinity outcome's count over the replicas.
	 */
	private static long count(String service, AffinityOutcome outcome) {
		long total = 0;
		for (int i = 0; i < REPLICAS; i++) {
			total += runtime(i, service).feature(AffinityState.class).outcome(outcome).sum();
		}
		return total;
	}

	private static ServiceRuntime runtime(int replica, String service) {
		return replicas.get(replica).getBean(ServiceRuntimes.class).whenReady(service).block(Duration.ofSeconds(10));
	}

	private static int indexOf(Snapshot<Member> snapshot, TestBackend backend) {
		for (int i = 0; i < snapshot.size(); i++) {
			if (snapshot.endpoint(i).address().equals("127.0.0.1:" + backend.port())) {
				return i;
			}
		}
		throw new IllegalStateException(backend.name() + " is not an endpoint");
	}

	private static List<ServiceInstance> instancesOf(String service, List<TestBackend> of) {
		return of.stream()
			.map((backend) -> (ServiceInstance) new DefaultServiceInstance(service + "-" + backend.name(), service,
					"127.0.0.1", backend.port(), false))
			.toList();
	}

	private static void addInstance(String service, TestBackend backend) {
		instances.get(service).addAll(instancesOf(service, List.of(backend)));
		announce();
	}

	private static void removeInstance(String service, TestBackend backend) {
		instances.get(service).removeIf((instance) -> instance.getPort() == backend.port());
		announce();
	}

	/**
	 * Tells every replica that discovery changed, as a discovery client's heartbeat does.
	 */
	private static void announce() {
		replicas.forEach((replica) -> replica.publishEvent(new HeartbeatEvent(AffinityIT.class, System.nanoTime())));
	}

	/**
	 * Waits until every replica balances {@code count} endpoints of the service.
	 */
	private static void awaitEndpoints(String service, int count) {
		await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
			for (ConfigurableApplicationContext replica : replicas) {
				ServiceRuntime runtime = replica.getBean(ServiceRuntimes.class)
					.whenReady(service)
					.block(Duration.ofSeconds(10));
				assertThat(runtime.snapshot().size()).as("%s's endpoints", service).isEqualTo(count);
			}
		});
	}

	/**
	 * Returns a signer of a service's cookie values as the replicas make them.
	 */
	static EndpointCookie signer(String service, String secret) {
		return new EndpointCookie(service, secret.getBytes(StandardCharsets.UTF_8), List.of(),
				Duration.ofDays(1).toSeconds(), () -> System.currentTimeMillis() / 1000);
	}

	/**
	 * Returns the endpoint id a cookie value carries, asserting the current secret signed
	 * it.
	 */
	static long endpointOf(EndpointCookie signer, @Nullable String value) {
		assertThat(value).isNotNull();
		assertThat(signer.check(value)).as("signed with the current secret").isZero();
		return signer.checkedEndpointId();
	}

	private static ConfigurableApplicationContext replica() {
		List<String> properties = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
				"spring.cloud.loadbalancer.cache.enabled=false", "gateway.lb.defaults.affinity.cookie=" + COOKIE,
				"gateway.lb.defaults.affinity.secret=" + SECRET,
				"gateway.lb.defaults.affinity.previous-secrets[0]=" + OLD_SECRET,
				"gateway.lb.services.scalehash.affinity.cookie=",
				"gateway.lb.services.scalehash.algorithm=consistent-hash",
				"gateway.lb.services.scalehash.hash-key=cookie:SID",
				"gateway.lb.services.app.affinity.learn=JSESSIONID",
				"gateway.lb.services.drained.health.max-drain-percent=100",
				"management.endpoints.web.exposure.include=gatewaylb"));
		int route = 0;
		for (String service : instances.keySet()) {
			String prefix = "spring.cloud.gateway.server.webflux.routes[" + route++ + "].";
			properties.add(prefix + "id=" + service);
			properties.add(prefix + "uri=lb://" + service);
			properties.add(prefix + "predicates[0]=Path=/" + service + "/**");
			properties.add(prefix + "filters[0]=StripPrefix=1");
		}
		return new SpringApplicationBuilder(TestGateway.class, Discovery.class)
			.properties(properties.toArray(String[]::new))
			.run();
	}

	@Configuration(proxyBeanMethods = false)
	static class Discovery {

		@Bean
		ReactiveDiscoveryClient affinityDiscoveryClient() {
			return new ReactiveDiscoveryClient() {

				@Override
				public String description() {
					return "instances the test changes";
				}

				@Override
				public Flux<ServiceInstance> getInstances(String serviceId) {
					List<ServiceInstance> listed = instances.get(serviceId);
					return (listed != null) ? Flux.fromIterable(List.copyOf(listed)) : Flux.empty();
				}

				@Override
				public Flux<String> getServices() {
					return Flux.fromIterable(instances.keySet());
				}

			};
		}

	}

}
