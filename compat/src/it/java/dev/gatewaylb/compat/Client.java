package dev.gatewaylb.compat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.netty.handler.codec.http.HttpMethod;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * A client of the gateway under test, on keep-alive connections as a browser or another
 * service would be.
 * <p>
 * Runs on NIO event loops of its own: it stands for a client on another machine, whose
 * transport is not under test. On io_uring, in the gateway's JVM, it is a Reactor Netty
 * client on the gateway's Netty, and with Spring Boot 4.0.7's Netty 4.2.15 it lost 2 or 3
 * of the gateway's answers in each run, even with multishot poll off
 * (docs/compatibility.md).
 */
final class Client implements AutoCloseable {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	private static final LoopResources LOOPS = LoopResources.create("compat-client", 1, true);

	private final ConnectionProvider connections = ConnectionProvider.create("compat-client", 8);

	private final HttpClient client;

	Client(int port) {
		this.client = HttpClient.create(this.connections)
			.runOn(LOOPS, false)
			.baseUrl("http://127.0.0.1:" + port)
			.responseTimeout(TIMEOUT);
	}

	Answer get(String path) {
		return get(path, Map.of());
	}

	/**
	 * Sends a GET with the headers and returns the answer.
	 */
	Answer get(String path, Map<String, String> headers) {
		return send(HttpMethod.GET, path, headers, null);
	}

	/**
	 * Sends a POST with a JSON body and returns the answer.
	 */
	Answer post(String path, String json) {
		return send(HttpMethod.POST, path, Map.of("Content-Type", "application/json"), json);
	}

	private Answer send(HttpMethod method, String path, Map<String, String> headers, @Nullable String body) {
		Answer answer = this.client.headers((h) -> headers.forEach(h::set))
			.request(method)
			.uri(path)
			.send((request, out) -> (body != null) ? out.sendString(Mono.just(body)) : out)
			.responseSingle((response, content) -> content.asString()
				.defaultIfEmpty("")
				.map((text) -> new Answer(response.status().code(), response.responseHeaders().get("X-Backend"), text,
						response.responseHeaders().getAll("Set-Cookie"))))
			.onErrorMap((ex) -> new IllegalStateException(method + " " + path + ": " + ex, ex))
			.block(TIMEOUT.plusSeconds(5));
		if (answer == null) {
			throw new IllegalStateException(method + " " + path + " had no answer");
		}
		return answer;
	}

	@Override
	public void close() {
		this.connections.disposeLater().block(TIMEOUT);
	}

	/**
	 * An answer: its status, the backend that gave it ({@code null} for the gateway's
	 * own), the body and the cookies set.
	 */
	record Answer(int status, @Nullable String backend, String body, List<String> setCookies) {
	}

}
