package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Route filters behave through the starter as through plain Spring Cloud Gateway
 * {@code lb://}: both gateways run in this JVM on the same backends, and each route
 * filter case is sent through each.
 */
class RouteFilterParityIT {

	private static final AtomicInteger unavailableRequests = new AtomicInteger();

	private static DisposableServer unavailable;

	private static DisposableServer echo;

	private static ConfigurableApplicationContext plain;

	private static ConfigurableApplicationContext starter;

	@BeforeAll
	static void start() {
		unavailable = TestBackend.bind(HttpServer.create().host("127.0.0.1").handle((request, response) -> {
			unavailableRequests.incrementAndGet();
			return response.status(503).send();
		}));
		echo = TestBackend.bind(HttpServer.create()
			.host("127.0.0.1")
			.handle((request, response) -> response.header("X-Target", request.uri()).send()));
		plain = gateway(false);
		starter = gateway(true);
	}

	@AfterAll
	static void stop() {
		starter.close();
		plain.close();
		unavailable.disposeNow();
		echo.disposeNow();
	}

	@Test
	void theRoutesRetryFilterSendsAsManyRequests() {
		int viaPlain = requestsFor(plain);
		int viaStarter = requestsFor(starter);
		assertThat(viaStarter).as("plain sent %d", viaPlain).isEqualTo(viaPlain);
	}

	@Test
	void setRequestUriReachesTheSameTarget() {
		for (String path : List.of("/set-lb/x", "/set-http/x")) {
			String viaPlain = target(plain, path);
			String viaStarter = target(starter, path);
			assertThat(viaStarter).as("%s: plain saw %s", path, viaPlain).isEqualTo(viaPlain);
		}
	}

	private static int requestsFor(ConfigurableApplicationContext gateway) {
		int before = unavailableRequests.get();
		int status = HttpClient.create()
			.get()
			.uri("http://127.0.0.1:" + port(gateway) + "/retry/x")
			.responseSingle((response, body) -> body.then(Mono.just(response.status().code())))
			.block(Duration.ofSeconds(20));
		assertThat(status).isEqualTo(503);
		return unavailableRequests.get() - before;
	}

	private static String target(ConfigurableApplicationContext gateway, String path) {
		return HttpClient.create()
			.get()
			.uri("http://127.0.0.1:" + port(gateway) + path)
			.responseSingle((response, body) -> body
				.then(Mono.just(response.status().code() + " " + response.responseHeaders().get("X-Target", "-"))))
			.block(Duration.ofSeconds(20));
	}

	private static ConfigurableApplicationContext gateway(boolean withStarter) {
		String routes = "spring.cloud.gateway.server.webflux.routes";
		return new SpringApplicationBuilder(TestGateway.class)
			.properties("server.port=0", "server.address=127.0.0.1", "gateway.lb.enabled=" + withStarter,
					routes + "[0].id=retry", routes + "[0].uri=lb://unavailable",
					routes + "[0].predicates[0]=Path=/retry/**", routes + "[0].filters[0].name=Retry",
					routes + "[0].filters[0].args.retries=3",
					routes + "[0].filters[0].args.statuses=SERVICE_UNAVAILABLE",
					routes + "[0].filters[0].args.methods=GET", routes + "[1].id=set-lb", routes + "[1].uri=lb://echo",
					routes + "[1].predicates[0]=Path=/set-lb/**",
					routes + "[1].filters[0]=SetRequestUri=lb://echo/changed", routes + "[2].id=set-http",
					routes + "[2].uri=lb://echo", routes + "[2].predicates[0]=Path=/set-http/**",
					routes + "[2].filters[0]=SetRequestUri=http://127.0.0.1:" + echo.port() + "/changed",
					"spring.cloud.discovery.client.simple.instances.unavailable[0].uri=http://127.0.0.1:"
							+ unavailable.port(),
					"spring.cloud.discovery.client.simple.instances.echo[0].uri=http://127.0.0.1:" + echo.port())
			.run();
	}

	private static int port(ConfigurableApplicationContext context) {
		return ((WebServerApplicationContext) context).getWebServer().getPort();
	}

}
