package dev.gatewaylb.compat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.channel.Channel;
import io.netty.util.Version;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import reactor.netty.http.server.HttpServer;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.cloud.gateway.config.GatewayAutoConfiguration;
import org.springframework.cloud.gateway.config.HttpClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The starter in a user's gateway, on the Spring Boot version, the library versions and
 * the transport the Failsafe execution names: balancing, a split, a retry, a drain, a
 * live refresh and the actuator report, through real sockets, asserted by what a client
 * and an operator see. One Spring context per execution.
 * <p>
 * The execution names what it expects in system properties ({@code compat.*}, see the
 * modules' poms), and the first test fails when the gateway runs on anything else, so
 * that two cells of the matrix can never be the same build twice.
 */
@SpringBootTest(classes = { CompatGateway.class, SmokeIT.ChannelProbe.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ExtendWith(OutputCaptureExtension.class)
class SmokeIT {

	private static final Log logger = LogFactory.getLog(SmokeIT.class);

	/**
	 * Netty's switch of multishot poll on io_uring, which the starter turns off on Netty
	 * before 4.2.17.
	 */
	private static final String MULTISHOT = "io.netty.iouring.pollAddMultishotEnabled";

	/**
	 * The logger of the starter's checks of the host's libraries at start-up.
	 */
	private static final String STARTUP_CHECKS = "dev.gatewaylb.internal.autoconfigure.GatewayLbEnvironmentPostProcessor";

	/**
	 * The file {@code application.yml} imports, empty at start-up: a refresh reads what
	 * the test writes there.
	 */
	static final Path liveConfig = emptyLiveConfig();

	static final Backend a = Backend.start("a");

	static final Backend b = Backend.start("b");

	static final Backend c = Backend.start("c");

	static final Backend failing = Backend.start("failing");

	static {
		failing.status(503);
	}

	@DynamicPropertySource
	static void instances(DynamicPropertyRegistry registry) {
		instance(registry, "rr", 0, a, 5);
		instance(registry, "rr", 1, b, 1);
		instance(registry, "rr", 2, c, 2);
		instance(registry, "shop-stable", 0, a, 1);
		instance(registry, "shop-canary", 0, b, 1);
		instance(registry, "retry", 0, failing, 1);
		instance(registry, "retry", 1, c, 1);
		instance(registry, "drain", 0, a, 1);
		instance(registry, "drain", 1, b, 1);
		instance(registry, "live", 0, a, 1);
		instance(registry, "live", 1, b, 1);
	}

	private static void instance(DynamicPropertyRegistry registry, String service, int index, Backend backend,
			int weight) {
		String instance = "spring.cloud.discovery.client.simple.instances." + service + "[" + index + "]";
		registry.add(instance + ".uri", backend::uri);
		registry.add(instance + ".metadata.weight", () -> weight);
	}

	@LocalServerPort
	int port;

	Client client;

	@BeforeEach
	void connect() {
		this.client = new Client(this.port);
	}

	/**
	 * Checks the invariant every gateway-lb IT checks, through the report: whatever a
	 * test did, no request is left in flight.
	 */
	@AfterEach
	void checkNothingIsLeftInFlight() {
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			for (JsonNode service : report().get("services")) {
				for (JsonNode endpoint : service.get("endpoints")) {
					assertThat(endpoint.get("inFlight").asInt()).as(endpoint.get("address").asString()).isZero();
				}
			}
		});
		this.client.close();
	}

	@AfterAll
	static void stopBackends() {
		List.of(a, b, c, failing).forEach(Backend::close);
	}

	@Test
	void runsOnTheVersionsAndTheTransportTheExecutionNames(CapturedOutput output) {
		String reactorNetty = HttpServer.class.getPackage().getImplementationVersion();
		String netty = Version.identify().get("netty-common").artifactVersion();
		// unset off Linux x86_64 and with -DskipTransportMatrix: whichever Reactor Netty
		// picks
		String transport = System.getProperty("compat.transport", "").toLowerCase(Locale.ROOT);
		Client.Answer answer = this.client.get("/rr/");
		assertThat(answer.status()).isEqualTo(200);
		Channel listening = ChannelProbe.listening.get();
		logger.info("Spring Boot " + SpringBootVersion.getVersion() + ", Spring Cloud Gateway "
				+ GatewayAutoConfiguration.class.getPackage().getImplementationVersion() + ", Reactor Netty "
				+ reactorNetty + ", Netty " + netty + "; listening on "
				+ ((listening != null) ? listening.getClass().getName() : "nothing") + ", accepted "
				+ ChannelProbe.accepted + ", upstream " + ChannelProbe.upstream + "; " + MULTISHOT + "="
				+ System.getProperty(MULTISHOT, "(unset)"));

		assertThat(SpringBootVersion.getVersion()).isEqualTo(expected("compat.boot.version"));
		assertThat(GatewayAutoConfiguration.class.getPackage().getImplementationVersion())
			.isEqualTo(expected("compat.spring-cloud-gateway.version"));
		assertThat(reactorNetty).isEqualTo(expected("compat.reactor-netty.version"));
		assertThat(netty).isEqualTo(expected("compat.netty.version"));

		if (!transport.isEmpty()) {
			assertThat(listening).as("the gateway's listening channel").isNotNull();
			assertThat(transport(listening.getClass().getName())).as(listening.getClass().getName())
				.isEqualTo(transport);
			assertThat(ChannelProbe.accepted).as("transports of the connections the gateway accepted")
				.containsExactly(transport);
			assertThat(ChannelProbe.upstream).as("transports of the gateway's upstream connections")
				.containsExactly(transport);
		}

		// The start-up warning of the keep-alive stall (reactor/reactor-netty#4361), on
		// exactly the versions that have it.
		boolean stalls = Runtime.Version.parse(reactorNetty).compareTo(Runtime.Version.parse("1.3.8")) < 0;
		assertThat(output.getOut().contains("reactor/reactor-netty#4361")).as("the start-up warning on " + reactorNetty)
			.isEqualTo(stalls);
		// The starter turns multishot poll off on io_uring with Netty before 4.2.17
		// (netty/netty#17049); the backends and the client run on NIO, so the gateway is
		// the first to load io_uring, as in a user's process.
		boolean lostReads = Runtime.Version.parse(netty.replace(".Final", ""))
			.compareTo(Runtime.Version.parse("4.2.17")) < 0;
		assertThat(System.getProperty(MULTISHOT)).as(MULTISHOT + " on " + transport + " with Netty " + netty)
			.isEqualTo((lostReads && transport.equals("io_uring")) ? "false" : null);
	}

	@Test
	void balancesRoundRobinWithExactCountsOverWholePeriods() {
		Map<String, Integer> counts = new HashMap<>();
		// weights 5, 1, 2: any 160 requests in a row are 20 whole periods of 8
		for (int i = 0; i < 160; i++) {
			Client.Answer answer = this.client.get("/rr/");
			assertThat(answer.status()).isEqualTo(200);
			counts.merge(answer.backend(), 1, Integer::sum);
		}
		assertThat(counts).containsExactlyInAnyOrderEntriesOf(Map.of("a", 100, "b", 20, "c", 40));
	}

	@Test
	void splitsClientsThreeToOneAndKeepsEachOnItsSide() {
		Random random = new Random(43);
		Map<String, Integer> sides = new HashMap<>();
		int clients = 100;
		for (int i = 0; i < clients; i++) {
			String cookie = "GWLB_AFFINITY=" + String.format("%024x", random.nextLong() & Long.MAX_VALUE);
			String first = this.client.get("/shop/", Map.of("Cookie", cookie)).backend();
			assertThat(this.client.get("/shop/", Map.of("Cookie", cookie)).backend()).as(cookie).isEqualTo(first);
			sides.merge(first, 1, Integer::sum);
		}
		// a for shop-stable (weight 3), b for shop-canary (1): 100 keys hashed put 25 on
		// the canary, give or take 4 standard deviations, sqrt(100 * 1/4 * 3/4) = 4.3
		assertThat(sides).containsOnlyKeys("a", "b");
		assertThat(sides.get("b")).as("%s", sides).isBetween(25 - 17, 25 + 17);
		Client.Answer newcomer = this.client.get("/shop/");
		assertThat(newcomer.setCookies()).singleElement().asString().startsWith("GWLB_AFFINITY=");
	}

	@Test
	void retriesOnTheOtherEndpointWhenOneAnswers503() {
		int before = failing.requests();
		for (int i = 0; i < 6; i++) {
			Client.Answer answer = this.client.get("/retry/");
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.backend()).isEqualTo("c");
		}
		// Some first attempts went to the failing endpoint and were answered by the
		// other.
		// How many is not a compatibility question: a retry's pick takes a turn of
		// round-robin, and five failures in a row eject the endpoint.
		assertThat(failing.requests() - before).isPositive();
	}

	@Test
	void drainsAnEndpointThroughTheActuatorAndBringsItBack() {
		Client.Answer drained = this.client.post("/actuator/gatewaylb/drain",
				"{\"endpoint\":\"" + b.address() + "\",\"drain\":true}");
		assertThat(drained.status()).as(drained.body()).isEqualTo(200);
		assertThat(json(drained.body()).get("state").asString()).isEqualTo("draining");
		// the drain reaches picks with the rebuild that follows it, on the control thread
		await().atMost(Duration.ofSeconds(10)).until(() -> backendsOf(4).equals(Set.of("a")));
		assertThat(backendsOf(20)).containsExactly("a");
		assertThat(endpoint("drain", b.address()).get("state").asString()).isEqualTo("draining");

		Client.Answer back = this.client.post("/actuator/gatewaylb/drain",
				"{\"endpoint\":\"" + b.address() + "\",\"drain\":false}");
		assertThat(back.status()).as(back.body()).isEqualTo(200);
		await().atMost(Duration.ofSeconds(10)).until(() -> backendsOf(4).equals(Set.of("a", "b")));
		assertThat(endpoint("drain", b.address()).get("state").asString()).isEqualTo("healthy");
	}

	@Test
	void refreshChangesTheAlgorithmOfARunningService() throws IOException {
		Map<String, String> oneUser = Map.of("X-User", "alice");
		assertThat(backendsOf("/live/", oneUser, 4)).as("round-robin").containsExactlyInAnyOrder("a", "b");

		Files.writeString(liveConfig, """
				gateway.lb.services.live.algorithm=consistent-hash
				gateway.lb.services.live.hash-key=header:X-User
				""");
		ListAppender<ILoggingEvent> startUpLog = new ListAppender<>();
		Logger startUp = (Logger) LoggerFactory.getLogger(STARTUP_CHECKS);
		startUpLog.start();
		startUp.addAppender(startUpLog);
		Client.Answer refreshed;
		try {
			refreshed = this.client.post("/actuator/refresh", "");
		}
		finally {
			startUp.detachAppender(startUpLog);
		}
		assertThat(refreshed.status()).as(refreshed.body()).isEqualTo(200);
		assertThat(refreshed.body()).contains("gateway.lb.services.live.algorithm");
		// Spring Cloud's refresh runs the environment post-processors again; the start-up
		// checks of the libraries' versions stay said once.
		assertThat(startUpLog.list).extracting(ILoggingEvent::getFormattedMessage).isEmpty();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> report().get("services").get("live").get("algorithm").asString(), "consistent-hash"::equals);

		assertThat(backendsOf("/live/", oneUser, 20)).as("one key, one backend").hasSize(1);
		assertThat(report().get("refreshes").get("applied").asInt()).isPositive();
	}

	@Test
	void reportsServicesEndpointsAndSplitsAtTheActuator() {
		this.client.get("/rr/");
		JsonNode report = report();
		assertThat(report.get("generation").asLong()).isPositive();
		assertThat(report.get("lastError").isNull()).isTrue();
		assertThat(names(report.get("services"))).contains("rr", "shop-stable", "shop-canary", "retry", "drain",
				"live");
		JsonNode rr = report.get("services").get("rr");
		assertThat(rr.get("algorithm").asString()).isEqualTo("round-robin");
		Map<String, Integer> weights = new HashMap<>();
		for (JsonNode endpoint : rr.get("endpoints")) {
			weights.put(endpoint.get("address").asString(), endpoint.get("weight").asInt());
			assertThat(endpoint.get("state").asString()).isEqualTo("healthy");
		}
		assertThat(weights).containsExactlyInAnyOrderEntriesOf(Map.of(a.address(), 5, b.address(), 1, c.address(), 2));
		JsonNode shop = report.get("splits").get("shop");
		assertThat(shop.get("stickyCookie").asString()).isEqualTo("GWLB_AFFINITY");
		List<String> targets = new ArrayList<>();
		for (JsonNode target : shop.get("targets")) {
			targets.add(target.get("service").asString() + "=" + target.get("weight").asInt());
		}
		assertThat(targets).containsExactly("shop-stable=3", "shop-canary=1");
		Client.Answer one = this.client.get("/actuator/gatewaylb/rr", Map.of("Accept", "application/json"));
		assertThat(one.status()).isEqualTo(200);
		assertThat(json(one.body()).get("endpoints")).hasSize(3);
	}

	private Set<String> backendsOf(int requests) {
		return backendsOf("/drain/", Map.of(), requests);
	}

	private Set<String> backendsOf(String path, Map<String, String> headers, int requests) {
		Set<String> backends = new HashSet<>();
		for (int i = 0; i < requests; i++) {
			Client.Answer answer = this.client.get(path, headers);
			assertThat(answer.status()).isEqualTo(200);
			backends.add(answer.backend());
		}
		return backends;
	}

	private JsonNode endpoint(String service, String address) {
		for (JsonNode endpoint : report().get("services").get(service).get("endpoints")) {
			if (endpoint.get("address").asString().equals(address)) {
				return endpoint;
			}
		}
		throw new IllegalStateException(address + " is not an endpoint of " + service);
	}

	private JsonNode report() {
		Client.Answer answer = this.client.get("/actuator/gatewaylb", Map.of("Accept", "application/json"));
		assertThat(answer.status()).as(answer.body()).isEqualTo(200);
		return json(answer.body());
	}

	private static JsonNode json(String body) {
		return JsonMapper.builder().build().readTree(body);
	}

	private static Set<String> names(JsonNode object) {
		Set<String> names = new HashSet<>();
		object.propertyNames().forEach(names::add);
		return names;
	}

	private static String expected(String property) {
		String value = System.getProperty(property);
		assertThat(value).as("system property " + property + ", set by the Failsafe execution").isNotBlank();
		return value;
	}

	/**
	 * Creates the empty file {@code application.yml} imports and names it in
	 * {@code compat.live-config}, before the context starts.
	 */
	private static Path emptyLiveConfig() {
		try {
			Path file = Files.createTempFile("compat-live", ".properties");
			file.toFile().deleteOnExit();
			System.setProperty("compat.live-config", file.toString());
			return file;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Names the transport of a channel class by its package, so that this compiles and
	 * runs without the native transports on its classpath.
	 */
	static String transport(String channelClass) {
		if (channelClass.startsWith("io.netty.channel.uring.")) {
			return "io_uring";
		}
		if (channelClass.startsWith("io.netty.channel.epoll.")) {
			return "epoll";
		}
		if (channelClass.startsWith("io.netty.channel.socket.nio.")) {
			return "nio";
		}
		return "unknown: " + channelClass;
	}

	/**
	 * Records the gateway's listening channel, the transports of the connections it
	 * accepts and of those it opens upstream.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class ChannelProbe {

		static final AtomicReference<@Nullable Channel> listening = new AtomicReference<>();

		static final Set<String> accepted = ConcurrentHashMap.newKeySet();

		static final Set<String> upstream = ConcurrentHashMap.newKeySet();

		@Bean
		NettyServerCustomizer recordServerChannels() {
			return (server) -> server.doOnBound((bound) -> listening.set(bound.channel()))
				.doOnConnection((connection) -> accepted.add(transport(connection.channel().getClass().getName())));
		}

		@Bean
		HttpClientCustomizer recordUpstreamChannels() {
			return (client) -> client
				.doOnConnected((connection) -> upstream.add(transport(connection.channel().getClass().getName())));
		}

	}

}
