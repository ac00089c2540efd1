package dev.gatewaylb.gateway;

import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import io.netty.handler.codec.http.websocketx.WebSocketClientHandshakeException;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.Http2SslContextSpec;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.io.ClassPathResource;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * WebSockets through gateway-lb: an {@code lb:ws://} route, and a WebSocket upgrade on an
 * {@code lb://} route. gateway-lb picks the endpoint, shakes hands with it before it
 * upgrades the client (so a refused handshake is retried elsewhere), and carries the
 * session, which counts as in flight on its endpoint until it closes.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class WebSocketIT extends GatewayIntegrationTest {

	static final List<DisposableServer> echoes = List.of(echo("one"), echo("two"));

	/**
	 * Three backends that hold WebSocket sessions open and count them, and answer short
	 * requests.
	 */
	static final List<SessionBackend> holders = List.of(new SessionBackend(), new SessionBackend(),
			new SessionBackend());

	/**
	 * Three echo backends discovered as the instances of {@code echo-ws}.
	 */
	static final List<DisposableServer> registered = List.of(echo("r1"), echo("r2"), echo("r3"));

	/**
	 * An HTTPS echo backend that offers h2 and HTTP/1.1 through ALPN.
	 */
	static final DisposableServer secure = secureEcho();

	/**
	 * A cleartext backend that speaks h2c (prior knowledge or upgrade) and HTTP/1.1.
	 */
	static final DisposableServer cleartextH2 = TestBackend.bind(HttpServer.create()
		.host("127.0.0.1")
		.protocol(HttpProtocol.HTTP11, HttpProtocol.H2C)
		.route((routes) -> routes
			.get("/protocol", (request, response) -> response.sendString(Mono.just(request.version().text())))
			.ws("/echo", (in, out) -> out.sendString(in.receive().asString().map((text) -> "h2c: " + text)))));

	/**
	 * A backend that closes a session as told, and notes how its clients closed theirs.
	 */
	static final Closer closer = new Closer();

	/**
	 * A port nothing listens on: a connection to it is refused.
	 */
	static final int closed = closedPort();

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		List<String> uris = echoes.stream().map((server) -> "http://127.0.0.1:" + server.port()).toList();
		route(registry, 0, "ws", "lb:ws://chat");
		route(registry, 1, "http", "lb://chat");
		route(registry, 2, "sockets", "lb:ws://sockets");
		route(registry, 3, "sockets-http", "lb://sockets");
		route(registry, 4, "flaky", "lb:ws://flaky");
		// As users write it (gateway#3044): the service's instances from the registry,
		// the request's path kept.
		String echo = "spring.cloud.gateway.server.webflux.routes[5]";
		registry.add(echo + ".id", () -> "echo-ws");
		registry.add(echo + ".uri", () -> "lb:ws://echo-ws");
		registry.add(echo + ".predicates[0]", () -> "Path=/echo");
		for (int i = 0; i < registered.size(); i++) {
			String instance = "spring.cloud.discovery.client.simple.instances.echo-ws[" + i + "]";
			int port = registered.get(i).port();
			registry.add(instance + ".uri", () -> "http://127.0.0.1:" + port);
			registry.add(instance + ".instance-id", () -> "echo-ws-" + port);
		}
		route(registry, 6, "wss", "lb:wss://secure-chat");
		route(registry, 7, "secure-http", "lb://secure-chat");
		route(registry, 8, "graceful", "lb:ws://graceful");
		route(registry, 9, "lingering", "lb:ws://lingering");
		route(registry, 10, "h2c-ws", "lb:ws://plain-h2");
		route(registry, 11, "h2c-http", "lb://plain-h2");
		route(registry, 12, "closer", "lb:ws://closer");
		TestGateway.properties(registry)
			.uris("chat", uris)
			.uris("sockets", holders.stream().map((holder) -> "http://127.0.0.1:" + holder.server.port()).toList())
			.set("gateway.lb.services.sockets.algorithm", "least-requests")
			// A refused endpoint first in round-robin's order, then a live one.
			.uris("flaky", List.of("http://127.0.0.1:" + closed, uris.get(0)))
			.set("gateway.lb.services.flaky.health.passive.consecutive-failures", 0)
			// An https service that offers h2: its sessions still shake hands over
			// HTTP/1.1.
			.uris("secure-chat", List.of("https://127.0.0.1:" + secure.port()))
			.set("gateway.lb.services.secure-chat.tls.trusted-ca", "classpath:tls/ca.pem")
			.set("gateway.lb.services.secure-chat.http2", true)
			// The same two echoes, as two services: one closes a drained endpoint's
			// sessions after a second, the other leaves them open.
			.uris("graceful", uris)
			.set("gateway.lb.services.graceful.drain.websocket-grace", "1s")
			.uris("lingering", uris)
			.uris("closer", List.of("http://127.0.0.1:" + closer.server.port()))
			.uris("plain-h2", List.of("http://127.0.0.1:" + cleartextH2.port()))
			.set("gateway.lb.services.plain-h2.pool.protocol", "h2c")
			.set("management.endpoints.web.exposure.include", "gatewaylb")
			.set("management.endpoint.gatewaylb.access", "unrestricted");
	}

	private static void route(DynamicPropertyRegistry registry, int index, String id, String uri) {
		String route = "spring.cloud.gateway.server.webflux.routes[" + index + "]";
		registry.add(route + ".id", () -> id);
		registry.add(route + ".uri", () -> uri);
		registry.add(route + ".predicates[0]", () -> "Path=/" + id + "/**");
		registry.add(route + ".filters[0]", () -> "StripPrefix=1");
	}

	@AfterAll
	static void stopBackends() {
		echoes.forEach(DisposableServer::disposeNow);
		registered.forEach(DisposableServer::disposeNow);
		secure.disposeNow();
		cleartextH2.disposeNow();
		closer.server.disposeNow();
		holders.forEach((holder) -> holder.server.disposeNow());
	}

	/**
	 * An open WebSocket is in flight on its endpoint until it closes, so least-requests
	 * balances open sockets: 300 opened one after the other over three endpoints end with
	 * 100 each, give or take the short requests that flow beside them and sway a pick now
	 * and then; and once every socket closed nothing is in flight.
	 */
	@Test
	void leastRequestsBalancesOpenSocketsWhileShortRequestsFlow() {
		Sinks.Empty<Void> closeAll = Sinks.empty();
		List<Disposable> sockets = new ArrayList<>();
		HttpClient client = HttpClient.create(ConnectionProvider.newConnection());
		try {
			try (ClientLoad shortRequests = new ClientLoad(this.client, "/sockets-http/short", 2)) {
				for (int i = 0; i < 300; i++) {
					int opened = i + 1;
					sockets.add(client.websocket()
						.uri("ws://127.0.0.1:" + this.port + "/sockets/hold")
						.handle((in, out) -> out.sendString(Flux.just("hello")).then().then(closeAll.asMono()))
						.subscribe());
					// Each socket is open at its backend before the next is picked for.
					await().pollDelay(Duration.ZERO)
						.pollInterval(Duration.ofMillis(2))
						.atMost(Duration.ofSeconds(10))
						.until(() -> openSessions() == opened);
				}
				shortRequests.await(50);
				assertThat(shortRequests.failures()).as(shortRequests.failureCauses().toString()).isZero();
			}
			// The short requests are over (answered or cancelled): what stays in flight
			// is the sockets, every one of them.
			await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("sockets") == 300);
			System.out.printf("300 sockets with least-requests: in flight %s, open at the backends %s%n",
					holders.stream()
						.map((holder) -> state("sockets", "127.0.0.1:" + holder.server.port()).inFlight())
						.toList(),
					holders.stream().map((holder) -> holder.open.get()).toList());
			for (SessionBackend holder : holders) {
				assertThat(state("sockets", "127.0.0.1:" + holder.server.port()).inFlight())
					.as("sockets in flight on each endpoint")
					.isBetween(95, 105);
				assertThat(holder.open.get()).as("sockets open at each endpoint").isBetween(95, 105);
			}
		}
		finally {
			closeAll.tryEmitEmpty();
			sockets.forEach(Disposable::dispose);
		}
		await().atMost(Duration.ofSeconds(20)).until(() -> openSessions() == 0 && inFlight("sockets") == 0);
		for (SessionBackend holder : holders) {
			EndpointState state = state("sockets", "127.0.0.1:" + holder.server.port());
			assertThat(state.consecutiveFailures()).as("a session is no failure").isZero();
		}
	}

	private static int openSessions() {
		return holders.stream().mapToInt((holder) -> holder.open.get()).sum();
	}

	@ParameterizedTest
	@ValueSource(strings = { "ws", "http" })
	void carriesASessionToTheEndpointItPicked(String route) {
		long picksBefore = picks("chat");
		List<String> replies = HttpClient.create()
			.websocket()
			.uri("ws://127.0.0.1:" + this.port + "/" + route + "/echo")
			.handle((in,
					out) -> out.sendString(Flux.just("hello", "bye")).then().thenMany(in.receive().asString().take(2)))
			.collectList()
			.block(Duration.ofSeconds(10));
		assertThat(replies).hasSize(2).allSatisfy((reply) -> assertThat(reply).matches("(one|two): (hello|bye)"));
		assertThat(picks("chat") - picksBefore).as("gateway-lb picked the session's endpoint").isEqualTo(1);
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("chat") == 0);
	}

	/**
	 * An {@code lb:ws://} route whose service's instances come from the registry (a
	 * {@code DiscoveryClient}) carries every session to one of them, in round-robin's
	 * order: gateway#3044 answers 404 there.
	 */
	@Test
	void balancesTheSessionsOfAnLbWsRouteOverTheRegistrysInstances() {
		Map<String, Integer> sessions = new TreeMap<>();
		for (int i = 0; i < 30; i++) {
			String reply = HttpClient.create()
				.websocket()
				.uri("ws://127.0.0.1:" + this.port + "/echo")
				.handle((in, out) -> out.sendString(Mono.just("hi")).then().thenMany(in.receive().asString().take(1)))
				.blockFirst(Duration.ofSeconds(10));
			assertThat(reply).matches("r[123]: hi");
			sessions.merge(reply.substring(0, 2), 1, Integer::sum);
		}
		assertThat(sessions).containsExactly(Map.entry("r1", 10), Map.entry("r2", 10), Map.entry("r3", 10));
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("echo-ws") == 0);
	}

	/**
	 * An {@code lb:wss://} route to an https service that offers h2: the handshake goes
	 * over TLS with the service's own trust, in HTTP/1.1, while the service's requests go
	 * in h2.
	 */
	@Test
	void carriesASessionOverTlsToAServiceThatSpeaksH2() {
		String reply = HttpClient.create()
			.websocket()
			.uri("ws://127.0.0.1:" + this.port + "/wss/echo")
			.handle((in, out) -> out.sendString(Mono.just("hi")).then().thenMany(in.receive().asString().take(1)))
			.blockFirst(Duration.ofSeconds(10));
		assertThat(reply).isEqualTo("secure: hi");
		assertThat(this.client.getNow("/secure-http/protocol").body()).isEqualTo("HTTP/2.0");
	}

	/**
	 * An endpoint drained through the actuator takes no new session; its open ones are
	 * left to close, or, with {@code drain.websocket-grace}, closed with 1001 once it has
	 * drained for the grace. The session of the service without a grace is still open
	 * when the other's grace has run out, its endpoint still holding it in flight.
	 */
	@Test
	void closesADrainedEndpointsSessionsWith1001AfterTheGraceAndLeavesThemOpenWithout() {
		OpenSocket graceful = OpenSocket.open(this.port, "/graceful/echo");
		OpenSocket lingering = OpenSocket.open(this.port, "/lingering/echo");
		String gracefulEndpoint = echoAddress(graceful.firstReply());
		String lingeringEndpoint = echoAddress(lingering.firstReply());
		try {
			drain("graceful", gracefulEndpoint, true);
			drain("lingering", lingeringEndpoint, true);
			assertThat(graceful.isOpen()).as("within its grace").isTrue();
			assertThat(graceful.closeStatus().block(Duration.ofSeconds(10))).extracting(WebSocketCloseStatus::code)
				.as("going away")
				.isEqualTo(1001);
			await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("graceful") == 0);
			assertThat(lingering.isOpen()).as("no grace: left to close").isTrue();
			assertThat(state("lingering", lingeringEndpoint).inFlight()).isEqualTo(1);
			assertThat(lingering.echo("still here")).endsWith(": still here");
		}
		finally {
			drain("graceful", gracefulEndpoint, false);
			drain("lingering", lingeringEndpoint, false);
			lingering.close();
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("lingering") == 0);
	}

	private void drain(String service, String endpoint, boolean drain) {
		GatewayClient.Answer answer = this.client.send("POST", "/actuator/gatewaylb/" + service,
				"{\"endpoint\":\"" + endpoint + "\",\"drain\":" + drain + ",\"force\":true}");
		assertThat(answer.status()).as(answer.body()).isEqualTo(200);
	}

	/**
	 * Returns the address of the echo backend that wrote a reply ({@code one: ...} or
	 * {@code two: ...}).
	 */
	private static String echoAddress(String reply) {
		return "127.0.0.1:" + echoes.get(reply.startsWith("one:") ? 0 : 1).port();
	}

	/**
	 * Whoever closes first, the other side is closed with the same status; an endpoint
	 * whose connection drops without a close frame has its client closed with 1014 (Bad
	 * Gateway). Each end leaves nothing in flight and charges the endpoint nothing.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "/closer/closes", "/closer/drops", "client" })
	void closesEachSideWithTheStatusTheOtherClosedWith(String how) {
		String path = how.startsWith("/") ? how : "/closer/closes";
		WebSocketCloseStatus status = HttpClient.create(ConnectionProvider.newConnection())
			.websocket()
			.uri("ws://127.0.0.1:" + this.port + path)
			.handle((in, out) -> {
				// The client closes with 4002 once its message came back, or asks the
				// endpoint to close with 4001 (or to drop its connection). Its inbound is
				// never cancelled: that would close the session with an empty frame.
				Sinks.One<String> echoed = Sinks.one();
				in.receive().asString().subscribe(echoed::tryEmitValue);
				Mono<Void> talk = how.equals("client")
						? out.sendString(Mono.just("hi")).then().then(echoed.asMono()).then(out.sendClose(4002, "done"))
						: out.sendString(Mono.just("4001")).then();
				return talk.then(Mono.<WebSocketCloseStatus>never()).or(in.receiveCloseStatus());
			})
			.blockFirst(Duration.ofSeconds(10));
		switch (how) {
			case "/closer/closes" -> assertThat(status.code()).as("the endpoint's status").isEqualTo(4001);
			case "/closer/drops" -> assertThat(status.code()).as("the endpoint's connection lost").isEqualTo(1014);
			default -> await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(closer.heard.get()).as("the client's status, passed on")
					.extracting(WebSocketCloseStatus::code)
					.isEqualTo(4002));
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("closer") == 0);
		assertThat(state("closer").consecutiveFailures()).isZero();
	}

	/**
	 * A service spoken to in h2c ({@code pool.protocol: h2c}): its requests go in h2
	 * without TLS, its WebSocket handshakes in HTTP/1.1, which the endpoint upgrades (in
	 * h2 a WebSocket needs the server's extended CONNECT, which few servers offer).
	 */
	@Test
	void carriesASessionToAServiceSpokenToInH2c() {
		String reply = HttpClient.create()
			.websocket()
			.uri("ws://127.0.0.1:" + this.port + "/h2c-ws/echo")
			.handle((in, out) -> out.sendString(Mono.just("hi")).then().thenMany(in.receive().asString().take(1)))
			.blockFirst(Duration.ofSeconds(10));
		assertThat(reply).isEqualTo("h2c: hi");
		assertThat(this.client.getNow("/h2c-http/protocol").body()).isEqualTo("HTTP/2.0");
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("plain-h2") == 0);
	}

	/**
	 * The endpoint's handshake comes before the client's upgrade: an endpoint that
	 * refuses the connection is retried on another, and the client never sees it.
	 */
	@Test
	void retriesAHandshakeWhoseConnectionWasRefusedBeforeTheClientIsUpgraded() {
		String refusing = "127.0.0.1:" + closed;
		String live = "127.0.0.1:" + echoes.get(0).port();
		ready("flaky");
		long refusingBefore = state("flaky", refusing).picks();
		long liveBefore = state("flaky", live).picks();
		for (int i = 0; i < 4; i++) {
			String reply = HttpClient.create()
				.websocket()
				.uri("ws://127.0.0.1:" + this.port + "/flaky/echo")
				.handle((in, out) -> out.sendString(Mono.just("hi")).then().thenMany(in.receive().asString().take(1)))
				.blockFirst(Duration.ofSeconds(10));
			assertThat(reply).isEqualTo("one: hi");
		}
		assertThat(state("flaky", live).picks() - liveBefore).as("each session on the live endpoint, once")
			.isEqualTo(4);
		assertThat(state("flaky", refusing).picks() - refusingBefore)
			.as("sessions that met the refusing endpoint first")
			.isPositive();
	}

	/**
	 * A handshake the endpoint refuses with a status is its answer: the client gets the
	 * status, not an upgraded connection that closes at once.
	 */
	@Test
	void passesTheStatusOfAHandshakeTheEndpointRefused() {
		assertThatThrownBy(() -> HttpClient.create()
			.websocket()
			.uri("ws://127.0.0.1:" + this.port + "/ws/nowhere")
			.handle((in, out) -> in.receive().then())
			.blockLast(Duration.ofSeconds(10))).isInstanceOfSatisfying(WebSocketClientHandshakeException.class,
					(refused) -> assertThat(refused.response().status().code()).isEqualTo(404));
	}

	private long picks(String service) {
		long picks = 0;
		Snapshot<Member> snapshot = ready(service).snapshot();
		for (int i = 0; i < snapshot.size(); i++) {
			picks += snapshot.state(i).picks();
		}
		return picks;
	}

	/**
	 * A client's session to an echo route, kept open until it or the gateway closes it:
	 * its first reply, the replies after, and the status it was closed with.
	 */
	static final class OpenSocket {

		private final Sinks.Many<String> replies = Sinks.many().replay().all();

		private final Sinks.Many<String> outgoing = Sinks.many().unicast().onBackpressureBuffer();

		private final Sinks.One<WebSocketCloseStatus> closed = Sinks.one();

		private final Sinks.Empty<Void> hangUp = Sinks.empty();

		private final java.util.concurrent.atomic.AtomicBoolean open = new java.util.concurrent.atomic.AtomicBoolean(
				true);

		static OpenSocket open(int port, String path) {
			OpenSocket socket = new OpenSocket();
			HttpClient.create(ConnectionProvider.newConnection())
				.websocket()
				.uri("ws://127.0.0.1:" + port + path)
				.handle((in, out) -> {
					in.receiveCloseStatus().subscribe(socket.closed::tryEmitValue);
					Mono<Void> receive = in.receive()
						.asString()
						.doOnNext(socket.replies::tryEmitNext)
						.doFinally((signal) -> socket.open.set(false))
						.then();
					return Mono.firstWithSignal(out.sendString(socket.outgoing.asFlux()).then(), receive,
							socket.hangUp.asMono());
				})
				.subscribe();
			socket.outgoing.tryEmitNext("hi");
			return socket;
		}

		String firstReply() {
			return this.replies.asFlux().blockFirst(Duration.ofSeconds(10));
		}

		String echo(String text) {
			this.outgoing.tryEmitNext(text);
			return this.replies.asFlux()
				.filter((reply) -> reply.endsWith(": " + text))
				.blockFirst(Duration.ofSeconds(10));
		}

		boolean isOpen() {
			return this.open.get();
		}

		Mono<WebSocketCloseStatus> closeStatus() {
			return this.closed.asMono();
		}

		void close() {
			this.hangUp.tryEmitEmpty();
		}

	}

	/**
	 * Closes a session with the status its client's first message names
	 * ({@code /closes}), drops its connection without a close frame at the first message
	 * ({@code /drops}), and notes the status each client closed with.
	 */
	static final class Closer {

		final AtomicReference<WebSocketCloseStatus> heard = new AtomicReference<>();

		final DisposableServer server = TestBackend
			.bind(HttpServer.create().host("127.0.0.1").route((routes) -> routes.ws("/closes", (in, out) -> {
				in.receiveCloseStatus().subscribe(this.heard::set);
				// Never cancelling the inbound, which would close with an empty frame.
				return in.receive()
					.asString()
					.concatMap((text) -> text.matches("\\d{4}") ? out.sendClose(Integer.parseInt(text), "closing")
							: out.sendString(Mono.just(text)).then())
					.then();
			})
				.ws("/drops",
						(in, out) -> in.receive()
							.doOnNext((message) -> in.withConnection((connection) -> connection.channel().close()))
							.then())));

	}

	/**
	 * Holds every WebSocket session open until its client closes it, counting them, and
	 * answers {@code GET /short} at once.
	 */
	static final class SessionBackend {

		final AtomicInteger open = new AtomicInteger();

		final DisposableServer server = TestBackend.bind(HttpServer.create()
			.host("127.0.0.1")
			.route((routes) -> routes.get("/short", (request, response) -> response.sendString(Mono.just("ok")))
				.ws("/hold", (in, out) -> {
					this.open.incrementAndGet();
					return in.receive().then().doFinally((signal) -> this.open.decrementAndGet());
				})));

	}

	private static DisposableServer echo(String name) {
		return TestBackend.bind(HttpServer.create()
			.host("127.0.0.1")
			.route((routes) -> routes.ws("/echo",
					(in, out) -> out.sendString(in.receive().asString().map((text) -> name + ": " + text)))));
	}

	private static DisposableServer secureEcho() {
		try (InputStream certificate = new ClassPathResource("tls/server.pem").getInputStream();
				InputStream key = new ClassPathResource("tls/server-key.pem").getInputStream()) {
			Http2SslContextSpec tls = Http2SslContextSpec.forServer(certificate, key);
			return HttpServer.create()
				.host("127.0.0.1")
				.port(0)
				.secure((spec) -> spec.sslContext(tls))
				.protocol(HttpProtocol.HTTP11, HttpProtocol.H2)
				.route((routes) -> routes
					.get("/protocol", (request, response) -> response.sendString(Mono.just(request.version().text())))
					.ws("/echo", (in, out) -> out.sendString(in.receive().asString().map((text) -> "secure: " + text))))
				.bindNow();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
