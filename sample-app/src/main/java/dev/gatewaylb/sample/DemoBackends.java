package dev.gatewaylb.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.QueryStringDecoder;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.SmartLifecycle;

/**
 * Runs the demo backends {@code alpha}, {@code beta} and {@code gamma} as plain Reactor
 * Netty servers on 127.0.0.1.
 * <p>
 * Each one answers every method and path with status 200, the body {@code <name>\n}
 * ({@code text/plain}) and the header {@code X-Backend: <name>}, so a client sees which
 * backend the gateway picked. The query parameter {@code delay} (milliseconds, up to ten
 * seconds) makes an answer slow; a missing or unreadable value means no delay. With
 * {@code slow=<name>} only that backend is slow and the others answer at once: one slow
 * endpoint, which a hedged backup goes around. With {@code fail=<name>} that backend
 * answers 500 instead: a broken release, which a rollout rolls back. {@code gamma}, the
 * next release in the demos, no longer serves {@code /legacy}: 404 for paths under it,
 * which a mirror to it shows as mismatches.
 */
final class DemoBackends implements SmartLifecycle {

	static final Duration MAX_DELAY = Duration.ofSeconds(10);

	private static final Log logger = LogFactory.getLog(DemoBackends.class);

	private final Map<String, Integer> ports = new LinkedHashMap<>();

	private volatile List<DisposableServer> servers = List.of();

	DemoBackends(DemoBackendsProperties properties) {
		this.ports.put("alpha", properties.alphaPort());
		this.ports.put("beta", properties.betaPort());
		this.ports.put("gamma", properties.gammaPort());
	}

	@Override
	public void start() {
		List<DisposableServer> started = new ArrayList<>();
		try {
			this.ports.forEach((name, port) -> started.add(bind(name, port)));
		}
		catch (RuntimeException ex) {
			// a taken port fails start-up; free the ports already bound on the way out
			started.forEach(DisposableServer::disposeNow);
			throw ex;
		}
		this.servers = List.copyOf(started);
		logger.info("demo backends listening on 127.0.0.1: " + this.ports);
	}

	@Override
	public void stop() {
		this.servers.forEach(DisposableServer::disposeNow);
		this.servers = List.of();
	}

	@Override
	public boolean isRunning() {
		return !this.servers.isEmpty();
	}

	/**
	 * Returns a phase just below the web server's: the backends are up before the gateway
	 * takes its first request and go down only after it has stopped.
	 */
	@Override
	public int getPhase() {
		return WebServerApplicationContext.START_STOP_LIFECYCLE_PHASE - 1;
	}

	private static DisposableServer bind(String name, int port) {
		return HttpServer.create()
			.host("127.0.0.1")
			.port(port)
			.handle((request, response) -> answer(name, request, response))
			.bindNow();
	}

	private static Mono<Void> answer(String name, HttpServerRequest request, HttpServerResponse response) {
		return response.status(status(name, request.uri()))
			.header(HttpHeaderNames.CONTENT_TYPE, "text/plain")
			.header("X-Backend", name)
			.sendString(Mono.just(name + "\n").delayElement(delay(name, request.uri())))
			.then();
	}

	/**
	 * Returns the delay of backend {@code name}: {@link #delay(String)}, unless the query
	 * parameter {@code slow} names another backend.
	 * @param name the backend's name
	 * @param uri the request URI, path and query
	 * @return the delay
	 */
	static Duration delay(String name, String uri) {
		try {
			List<String> slow = new QueryStringDecoder(uri).parameters().get("slow");
			if (slow != null && !slow.isEmpty() && !slow.contains(name)) {
				return Duration.ZERO;
			}
		}
		catch (IllegalArgumentException ex) {
			// a bad %-escape: as if there were no "slow"
		}
		return delay(uri);
	}

	/**
	 * Returns the status of backend {@code name}'s answer: 500 when {@link #fails}, 404
	 * for gamma under {@code /legacy}, else 200.
	 * @param name the backend's name
	 * @param uri the request URI, path and query
	 * @return the status
	 */
	static int status(String name, String uri) {
		if (fails(name, uri)) {
			return 500;
		}
		return ("gamma".equals(name)
				&& (uri.equals("/legacy") || uri.startsWith("/legacy/") || uri.startsWith("/legacy?"))) ? 404 : 200;
	}

	/**
	 * Returns whether the query parameter {@code fail} names backend {@code name}: the
	 * demo switch that breaks one backend for a rollout to catch.
	 * @param name the backend's name
	 * @param uri the request URI, path and query
	 * @return whether to answer 500
	 */
	static boolean fails(String name, String uri) {
		try {
			List<String> fail = new QueryStringDecoder(uri).parameters().get("fail");
			return fail != null && fail.contains(name);
		}
		catch (IllegalArgumentException ex) {
			// a bad %-escape: as if there were no "fail"
			return false;
		}
	}

	/**
	 * Returns the delay that the query parameter {@code delay} (milliseconds) of a
	 * request URI asks for, clamped to 0..{@link #MAX_DELAY}.
	 * @param uri the request URI, path and query
	 * @return the delay; zero when the parameter is absent or not a whole number
	 */
	static Duration delay(String uri) {
		try {
			List<String> values = new QueryStringDecoder(uri).parameters().get("delay");
			if (values == null || values.isEmpty()) {
				return Duration.ZERO;
			}
			long millis = Long.parseLong(values.get(0).trim());
			return Duration.ofMillis(Math.min(Math.max(millis, 0), MAX_DELAY.toMillis()));
		}
		catch (IllegalArgumentException ex) {
			// a demo backend answers a typo (delay=abc, a bad %-escape) without delay,
			// never with a 500
			return Duration.ZERO;
		}
	}

}
