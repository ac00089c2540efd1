package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

/**
 * A real HTTP client of the gateway under test.
 */
final class GatewayClient implements AutoCloseable {

	private final ConnectionProvider connections = ConnectionProvider.builder("gateway-client")
		.maxConnections(4_000)
		.pendingAcquireMaxCount(-1)
		.build();

	private final HttpClient client;

	GatewayClient(int port) {
		this.client = HttpClient.create(this.connections).baseUrl("http://127.0.0.1:" + port);
	}

	/**
	 * Sends a GET and returns the status and the backend that answered.
	 */
	Mono<Answer> get(String path, Map<String, String> headers) {
		return this.client.headers((h) -> headers.forEach(h::set))
			.get()
			.uri(path)
			.responseSingle((response, body) -> body.asString()
				.defaultIfEmpty("")
				.map((text) -> new Answer(response.status().code(), response.responseHeaders().get("X-Backend"), text,
						response.responseHeaders().getAll("Set-Cookie"))));
	}

	/**
	 * Sends a GET and returns the body's chunks as they arrive.
	 */
	Flux<String> stream(String path) {
		return this.client.get().uri(path).responseContent().asString();
	}

	/**
	 * Sends a request with a JSON body, or none, and returns the status and the body.
	 */
	Answer send(String method, String path, String json) {
		return this.client.headers((h) -> h.set("Content-Type", "application/json"))
			.request(io.netty.handler.codec.http.HttpMethod.valueOf(method))
			.uri(path)
			.send((request, out) -> (json != null) ? out.sendString(Mono.just(json)) : out)
			.responseSingle((response, body) -> body.asString()
				.defaultIfEmpty("")
				.map((text) -> new Answer(response.status().code(), response.responseHeaders().get("X-Backend"), text,
						response.responseHeaders().getAll("Set-Cookie"))))
			.block(Duration.ofSeconds(30));
	}

	Answer getNow(String path) {
		return getNow(path, Map.of());
	}

	Answer getNow(String path, Map<String, String> headers) {
		return get(path, headers).block(Duration.ofSeconds(30));
	}

	@Override
	public void close() {
		this.connections.disposeLater().block(Duration.ofSeconds(10));
	}

	record Answer(int status, String backend, String body, List<String> setCookies) {
	}

}
