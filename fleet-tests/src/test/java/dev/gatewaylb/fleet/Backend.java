package dev.gatewaylb.fleet;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.channel.Channel;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * A loopback backend that answers every request with its name, in the body and in
 * {@code X-Backend}, with status 200 unless told otherwise, and counts the requests it
 * answered.
 */
final class Backend implements AutoCloseable {

	private final String name;

	private final AtomicInteger requests = new AtomicInteger();

	private final AtomicInteger status = new AtomicInteger(200);

	private final DisposableServer server;

	private final Set<Channel> connections = ConcurrentHashMap.newKeySet();

	private Backend(String name) {
		this.name = name;
		this.server = HttpServer.create().host("127.0.0.1").port(0).doOnConnection((connection) -> {
			this.connections.add(connection.channel());
			connection.onDispose(() -> this.connections.remove(connection.channel()));
		}).handle((request, response) -> {
			this.requests.incrementAndGet();
			return response.status(this.status.get()).header("X-Backend", name).sendString(Mono.just(name)).then();
		}).bindNow();
	}

	static Backend start(String name) {
		return new Backend(name);
	}

	/**
	 * Answers every request with this status from now on: 500 for a broken release.
	 */
	Backend status(int status) {
		this.status.set(status);
		return this;
	}

	String name() {
		return this.name;
	}

	int port() {
		return this.server.port();
	}

	String address() {
		return "127.0.0.1:" + port();
	}

	int requests() {
		return this.requests.get();
	}

	/**
	 * Stops listening and drops its connections, kept-alive ones included: a backend that
	 * died while still registered.
	 */
	@Override
	public void close() {
		this.server.disposeNow();
		this.connections.forEach(Channel::close);
	}

}
