package dev.gatewaylb.kubernetes;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.LoopResources;

/**
 * A pod for the tests: a real HTTP server on a loopback address of its own (127.0.0.N),
 * all of them on one port as the pods of a Service are, answering with its name in
 * {@code X-Backend} after the request's {@code delay} query parameter (milliseconds), and
 * counting the requests it is serving.
 */
final class SliceBackend implements AutoCloseable {

	/**
	 * Event loops of the backends' own: a gateway context that closes must not take them
	 * with Reactor Netty's global ones.
	 */
	private static final LoopResources LOOPS = LoopResources.create("slice-backend", 1, true);

	private final String name;

	private final String address;

	private final DisposableServer server;

	private final AtomicInteger active = new AtomicInteger();

	private SliceBackend(String name, String address, int port) {
		this.name = name;
		this.address = address;
		this.server = HttpServer.create().host(address).port(port).runOn(LOOPS).handle((request, response) -> {
			this.active.incrementAndGet();
			long delay = delay(request.uri());
			Mono<Void> answer = response.header("X-Backend", this.name).sendString(Mono.just(this.name)).then();
			return ((delay > 0) ? Mono.delay(Duration.ofMillis(delay)).then(answer) : answer)
				.doFinally((signal) -> this.active.decrementAndGet());
		}).bindNow();
	}

	/**
	 * Starts backends on 127.0.0.1, 127.0.0.2 ... on one port.
	 * @param prefix the names' prefix: prefix-1, prefix-2 ...
	 * @param count how many
	 * @param port the port, or 0 for any free one on the first address (taken for all)
	 */
	static SliceBackend[] start(String prefix, int count, int port) {
		SliceBackend[] backends = new SliceBackend[count];
		int chosen = port;
		for (int i = 0; i < count; i++) {
			backends[i] = new SliceBackend(prefix + "-" + (i + 1), "127.0.0." + (i + 1), chosen);
			chosen = backends[i].port();
		}
		return backends;
	}

	String name() {
		return this.name;
	}

	String address() {
		return this.address;
	}

	int port() {
		return this.server.port();
	}

	int active() {
		return this.active.get();
	}

	private static long delay(String uri) {
		int at = uri.indexOf("delay=");
		if (at < 0) {
			return 0;
		}
		int end = at + 6;
		while (end < uri.length() && Character.isDigit(uri.charAt(end))) {
			end++;
		}
		return Long.parseLong(uri.substring(at + 6, end));
	}

	@Override
	public void close() {
		this.server.disposeNow();
	}

}
