package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.discovery.Member;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * WebSockets through gateway-lb: an {@code lb:ws://} route, and a WebSocket upgrade on an
 * {@code lb://} route. gateway-lb picks the endpoint, the gateway's WebSocket routing
 * filter (ordered after gateway-lb's routing filter) carries the session, and the session
 * counts as in flight until it closes.
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

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		List<String> uris = echoes.stream().map((server) -> "http://127.0.0.1:" + server.port()).toList();
		String ws = "spring.cloud.gateway.server.webflux.routes[0]";
		registry.add(ws + ".id", () -> "ws");
		registry.add(ws + ".uri", () -> "lb:ws://chat");
		registry.add(ws + ".predicates[0]", () -> "Path=/ws/**");
		registry.add(ws + ".filters[0]", () -> "StripPrefix=1");
		String http = "spring.cloud.gateway.server.webflux.routes[1]";
		registry.add(http + ".id", () -> "http");
		registry.add(http + ".uri", () -> "lb://chat");
		registry.add(http + ".predicates[0]", () -> "Path=/http/**");
		registry.add(http + ".filters[0]", () -> "StripPrefix=1");
		String sockets = "spring.cloud.gateway.server.webflux.routes[2]";
		registry.add(sockets + ".id", () -> "sockets");
		registry.add(sockets + ".uri", () -> "lb:ws://sockets");
		registry.add(sockets + ".predicates[0]", () -> "Path=/sockets/**");
		registry.add(sockets + ".filters[0]", () -> "StripPrefix=1");
		String shortRequests = "spring.cloud.gateway.server.webflux.routes[3]";
		registry.add(shortRequests + ".id", () -> "sockets-http");
		registry.add(shortRequests + ".uri", () -> "lb://sockets");
		registry.add(shortRequests + ".predicates[0]", () -> "Path=/sockets-http/**");
		registry.add(shortRequests + ".filters[0]", () -> "StripPrefix=1");
		TestGateway.properties(registry)
			.uris("chat", uris)
			.uris("sockets", holders.stream().map((holder) -> "http://127.0.0.1:" + holder.server.port()).toList())
			.set("gateway.lb.services.sockets.algorithm", "least-requests");
	}

	@AfterAll
	static void stopBackends() {
		echoes.forEach(DisposableServer::disposeNow);
		holders.forEach((holder) -> holder.server.disposeNow());
	}

	/**
	 * An open WebSocket is in flight until it closes, so least-requests balances open
	 * sockets: 300 opened one after the other over three endpoints end with 100 each,
	 * give or take the short requests that flow beside them.
	 */
	@org.junit.jupiter.api.Test
	void leastRequestsBalancesOpenSocketsWhileShortRequestsFlow() {
		Sinks.Empty<Void> closeAll = Sinks.empty();
		List<reactor.core.Disposable> sockets = new java.util.ArrayList<>();
		HttpClient client = HttpClient.create(reactor.netty.resources.ConnectionProvider.newConnection());
		try (ClientLoad shortRequests = new ClientLoad(this.client, "/sockets-http/short", 2)) {
			for (int i = 0; i < 300; i++) {
				int opened = i + 1;
				sockets.add(client.websocket()
					.uri("ws://127.0.0.1:" + this.port + "/sockets/hold")
					.handle((in, out) -> out.sendString(Flux.just("hello")).then().then(closeAll.asMono()))
					.subscribe());
				await().atMost(Duration.ofSeconds(10)).until(() -> openSessions() == opened);
			}
			shortRequests.await(50);
			assertThat(shortRequests.failures()).isZero();
		}
		assertThat(inFlight("sockets")).as("every open socket is in flight").isEqualTo(300);
		assertThat(holders).allSatisfy((holder) -> assertThat(holder.open.get()).isBetween(95, 105));
		closeAll.tryEmitEmpty();
		sockets.forEach(reactor.core.Disposable::dispose);
		await().atMost(Duration.ofSeconds(20)).until(() -> openSessions() == 0 && inFlight("sockets") == 0);
	}

	private static int openSessions() {
		return holders.stream().mapToInt((holder) -> holder.open.get()).sum();
	}

	@ParameterizedTest
	@ValueSource(strings = { "ws", "http" })
	void carriesASessionToTheEndpointItPicked(String route) {
		long picksBefore = picks();
		List<String> replies = HttpClient.create()
			.websocket()
			.uri("ws://127.0.0.1:" + this.port + "/" + route + "/echo")
			.handle((in,
					out) -> out.sendString(Flux.just("hello", "bye")).then().thenMany(in.receive().asString().take(2)))
			.collectList()
			.block(Duration.ofSeconds(10));
		assertThat(replies).hasSize(2).allSatisfy((reply) -> assertThat(reply).matches("(one|two): (hello|bye)"));
		assertThat(picks() - picksBefore).as("gateway-lb picked the session's endpoint").isEqualTo(1);
		await().atMost(Duration.ofSeconds(10)).until(() -> inFlight("chat") == 0);
	}

	private long picks() {
		long picks = 0;
		Snapshot<Member> snapshot = ready("chat").snapshot();
		for (int i = 0; i < snapshot.size(); i++) {
			picks += snapshot.state(i).picks();
		}
		return picks;
	}

	/**
	 * Holds every WebSocket session open until its client closes it, counting them, and
	 * answers {@code GET /short} at once.
	 */
	static final class SessionBackend {

		final java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger();

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

}
