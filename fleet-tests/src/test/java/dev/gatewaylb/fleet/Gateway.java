package dev.gatewaylb.fleet;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A gateway replica with gateway-lb, started in this JVM on a random loopback port with
 * the given properties, and a client for it.
 */
final class Gateway implements AutoCloseable {

	private final ConfigurableApplicationContext context;

	private final ConnectionProvider connections = ConnectionProvider.create("fleet-client", 64);

	private final HttpClient client;

	private Gateway(ConfigurableApplicationContext context) {
		this.context = context;
		this.client = HttpClient.create(this.connections).baseUrl("http://127.0.0.1:" + port());
	}

	static Gateway start(Map<String, Object> properties) {
		List<String> all = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1",
				"management.endpoints.web.exposure.include=gatewaylb,refresh",
				"management.endpoint.gatewaylb.access=unrestricted"));
		properties.forEach((key, value) -> all.add(key + "=" + value));
		return new Gateway(new SpringApplicationBuilder(App.class).web(WebApplicationType.REACTIVE)
			.properties(all.toArray(String[]::new))
			.run());
	}

	/**
	 * Adds route {@code index}: {@code /<service>/**} to {@code lb://<service>}, the
	 * prefix stripped.
	 */
	static void route(Map<String, Object> properties, int index, String service) {
		String route = "spring.cloud.gateway.server.webflux.routes[" + index + "]";
		properties.put(route + ".id", service);
		properties.put(route + ".uri", "lb://" + service);
		properties.put(route + ".predicates[0]", "Path=/" + service + "/**");
		properties.put(route + ".filters[0]", "StripPrefix=1");
	}

	int port() {
		return Integer.parseInt(this.context.getEnvironment().getProperty("local.server.port"));
	}

	ConfigurableApplicationContext context() {
		return this.context;
	}

	/**
	 * Sends a GET and returns the backend that answered, or {@code "<status>"} for an
	 * answer that is not a 200.
	 */
	String get(String path) {
		return this.client.get()
			.uri(path)
			.responseSingle((response, body) -> body.asString()
				.defaultIfEmpty("")
				.map((text) -> (response.status().code() == 200) ? response.responseHeaders().get("X-Backend")
						: "<" + response.status().code() + ">"))
			.block(Duration.ofSeconds(30));
	}

	/**
	 * Sends a POST, with a JSON body or none, and returns the status.
	 */
	int post(String path, String json) {
		return this.client.headers((headers) -> headers.set("Content-Type", "application/json"))
			.post()
			.uri(path)
			.send(reactor.core.publisher.Mono
				.just(io.netty.buffer.Unpooled.copiedBuffer(json, java.nio.charset.StandardCharsets.UTF_8)))
			.responseSingle(
					(response, body) -> body.asString().defaultIfEmpty("").map((text) -> response.status().code()))
			.block(Duration.ofSeconds(30));
	}

	int post(String path) {
		return post(path, "");
	}

	/**
	 * Returns the body of a GET.
	 */
	String body(String path) {
		return this.client.get().uri(path).responseContent().aggregate().asString().block(Duration.ofSeconds(30));
	}

	@Override
	public void close() {
		this.connections.disposeLater().block(Duration.ofSeconds(10));
		this.context.close();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
