package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A loopback backend that can fail on purpose: answer every request with a chosen status,
 * answer its health path with another, die and come back on the same port.
 */
final class HealthBackend implements AutoCloseable {

	private final String name;

	private final AtomicInteger status = new AtomicInteger(200);

	private final AtomicInteger healthStatus = new AtomicInteger(200);

	private final AtomicLong delayMillis = new AtomicLong();

	private final AtomicInteger requests = new AtomicInteger();

	private final java.util.Set<String> headerNames = java.util.concurrent.ConcurrentHashMap.newKeySet();

	private int port;

	private volatile @Nullable DisposableServer server;

	private final java.util.Set<io.netty.channel.Channel> connections = java.util.concurrent.ConcurrentHashMap
		.newKeySet();

	private HealthBackend(String name) {
		this.name = name;
		start();
	}

	/**
	 * Starts {@code count} backends named {@code prefix1}, {@code prefix2}...
	 */
	static List<HealthBackend> start(String prefix, int count) {
		return IntStream.rangeClosed(1, count).mapToObj((i) -> start(prefix + i)).toList();
	}

	/**
	 * Routes {@code /<service>/**} to the backends, weight 1 each.
	 */
	static TestGateway route(TestGateway gateway, String service, List<HealthBackend> backends) {
		return gateway.route(service).uris(service, backends.stream().map(HealthBackend::uri).toList());
	}

	static HealthBackend start(String name) {
		return new HealthBackend(name);
	}

	/**
	 * Binds again, on the same port after the first time.
	 */
	synchronized void start() {
		HttpServer server = HttpServer.create().host("127.0.0.1").doOnConnection((connection) -> {
			this.connections.add(connection.channel());
			connection.onDispose(() -> this.connections.remove(connection.channel()));
		}).handle((request, response) -> {
			if (request.uri().startsWith("/health")) {
				return response.status(this.healthStatus.get()).sendString(Mono.just("health")).then();
			}
			this.requests.incrementAndGet();
			request.requestHeaders()
				.names()
				.forEach((header) -> this.headerNames.add(header.toLowerCase(java.util.Locale.ROOT)));
			Mono<Void> answer = response.status(this.status.get())
				.header("X-Backend", this.name)
				.sendString(Mono.just(this.name))
				.then();
			long delay = this.delayMillis.get();
			return (delay > 0) ? Mono.delay(Duration.ofMillis(delay)).then(answer) : answer;
		});
		// The first time, the next port of the test backends: started one after the
		// other, backends of both kinds are listed in the order they were started.
		DisposableServer bound = (this.port == 0) ? TestBackend.bind(server) : server.port(this.port).bindNow();
		this.port = bound.port();
		this.server = bound;
	}

	/**
	 * Stops listening and drops every connection, kept-alive ones included: a backend
	 * that died.
	 */
	synchronized void kill() {
		DisposableServer bound = this.server;
		if (bound != null) {
			bound.disposeNow();
			this.server = null;
		}
		this.connections.forEach(io.netty.channel.Channel::close);
	}

	String name() {
		return this.name;
	}

	String uri() {
		return "http://127.0.0.1:" + this.port;
	}

	String address() {
		return "127.0.0.1:" + this.port;
	}

	/**
	 * Returns whether any request this backend served carried the header.
	 */
	boolean sawHeader(String name) {
		return this.headerNames.contains(name.toLowerCase(java.util.Locale.ROOT));
	}

	void status(int status) {
		this.status.set(status);
	}

	void healthStatus(int status) {
		this.healthStatus.set(status);
	}

	void delay(Duration delay) {
		this.delayMillis.set(delay.toMillis());
	}

	int requests() {
		return this.requests.get();
	}

	@Override
	public void close() {
		kill();
	}

}
