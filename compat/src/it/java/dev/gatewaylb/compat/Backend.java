package dev.gatewaylb.compat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * A backend on loopback that answers every request with its name, in the body and in
 * {@code X-Backend}, with the status it is told (200 until then), and counts the requests
 * it got.
 * <p>
 * Runs on NIO event loops of its own: it stands for a service in another process, whose
 * transport is not under test, and it must not load Netty's io_uring support before the
 * gateway starts, since the starter sets a property of it at start-up on Netty before
 * 4.2.17.
 */
final class Backend implements AutoCloseable {

	private static final LoopResources LOOPS = LoopResources.create("compat-backend", 1, true);

	private final String name;

	private final AtomicInteger status = new AtomicInteger(200);

	private final AtomicInteger requests = new AtomicInteger();

	private final DisposableServer server;

	private Backend(String name) {
		this.name = name;
		this.server = HttpServer.create().host("127.0.0.1").port(0).runOn(LOOPS, false).handle((request, response) -> {
			this.requests.incrementAndGet();
			return response.status(this.status.get())
				.header("X-Backend", name)
				.header("Content-Type", "text/plain")
				.sendString(Mono.just(name))
				.then();
		}).bindNow();
	}

	static Backend start(String name) {
		return new Backend(name);
	}

	String name() {
		return this.name;
	}

	/**
	 * Returns the backend's URI, for a discovery client's instance.
	 */
	String uri() {
		return "http://127.0.0.1:" + this.server.port();
	}

	/**
	 * Returns the backend's {@code host:port}, as the actuator names an endpoint.
	 */
	String address() {
		return "127.0.0.1:" + this.server.port();
	}

	/**
	 * Answers every request from now on with {@code status}.
	 */
	void status(int status) {
		this.status.set(status);
	}

	int requests() {
		return this.requests.get();
	}

	@Override
	public void close() {
		this.server.disposeNow(Duration.ofSeconds(5));
	}

}
