package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
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
						response.responseHeaders().getAll("Set-Cookie"),
						Long.parseLong(response.responseHeaders().get("X-Backend-Delay", "-1")),
						response.responseHeaders().get("Retry-After"))));
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
						response.responseHeaders().getAll("Set-Cookie"),
						Long.parseLong(response.responseHeaders().get("X-Backend-Delay", "-1")),
						response.responseHeaders().get("Retry-After"))))
			.block(Duration.ofSeconds(30));
	}

	/**
	 * Sends a GET and returns what arrived of the body and how the transfer ended: a body
	 * cut off midway ends with an error, not with a clean end.
	 */
	Transfer receive(String path) {
		AtomicInteger status = new AtomicInteger();
		AtomicLong received = new AtomicLong();
		AtomicLong declared = new AtomicLong(-1);
		Throwable error = this.client.get().uri(path).response((response, body) -> {
			status.set(response.status().code());
			String length = response.responseHeaders().get("Content-Length");
			if (length != null) {
				declared.set(Long.parseLong(length));
			}
			return body.doOnNext((buffer) -> received.addAndGet(buffer.readableBytes()));
		}).then(Mono.<Throwable>empty()).onErrorResume(Mono::just).block(Duration.ofSeconds(30));
		return new Transfer(status.get(), received.get(), declared.get(), error);
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

	/**
	 * What arrived of a response: its status, the body's bytes, the declared
	 * Content-Length (-1 when none) and the error that ended it, if any.
	 */
	record Transfer(int status, long received, long declared, @Nullable Throwable error) {
	}

	/**
	 * An answer: its status, the backend that gave it, the body, the cookies set, the
	 * delay the backend waited before it answered ({@link TestBackend}'s
	 * {@code X-Backend-Delay}, -1 when absent), and its {@code Retry-After}.
	 */
	record Answer(int status, String backend, String body, List<String> setCookies, long backendDelayMillis,
			@Nullable String retryAfter) {
	}

}
