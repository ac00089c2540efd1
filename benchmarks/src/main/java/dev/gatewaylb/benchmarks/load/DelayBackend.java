package dev.gatewaylb.benchmarks.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;

import io.netty.handler.codec.http.HttpHeaderNames;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/**
 * The backends of the slow-backend and tail load scenarios: one process, one Reactor
 * Netty server per {@code port:delayMillis[:slowPercent:slowMillis]} argument on
 * 127.0.0.1, each answering every request with {@code 200 ok} after its delay, without
 * using a CPU while it waits. With the two optional fields, that share of the answers (a
 * draw seeded by the port, so runs repeat) takes {@code slowMillis} instead: sporadic
 * slowness, a GC pause or a cold cache.
 * <p>
 * {@code GET /__stats} on any port answers {@code port count} lines, the requests each
 * port served since start (a stats request is not counted); the load script reads it
 * before and after a run for each backend's share. Runs until killed.
 * <p>
 * Usage: {@code java -cp benchmarks.jar dev.gatewaylb.benchmarks.load.DelayBackend
 * 18091:10 18092:10 18093:100 18097:5:3:500}
 */
public final class DelayBackend {

	private DelayBackend() {
	}

	public static void main(String[] args) {
		if (args.length == 0) {
			throw new IllegalArgumentException("usage: DelayBackend port:delayMillis[:slowPercent:slowMillis]...");
		}
		Map<Integer, LongAdder> counts = new LinkedHashMap<>();
		List<DisposableServer> servers = new ArrayList<>();
		for (String arg : args) {
			String[] parts = arg.split(":", 2);
			int port = Integer.parseInt(parts[0]);
			String[] fields = parts[1].split(":");
			Duration usual = Duration.ofMillis(Long.parseLong(fields[0]));
			int slowPercent = (fields.length > 2) ? Integer.parseInt(fields[1]) : 0;
			Duration slow = (fields.length > 2) ? Duration.ofMillis(Long.parseLong(fields[2])) : usual;
			SplittableRandom seeded = new SplittableRandom(port);
			LongAdder count = new LongAdder();
			counts.put(port, count);
			servers.add(HttpServer.create().host("127.0.0.1").port(port).handle((request, response) -> {
				if (request.uri().startsWith("/__stats")) {
					return response.sendString(Mono.just(stats(counts))).then();
				}
				count.increment();
				Duration delay = usual;
				if (slowPercent > 0) {
					int draw;
					synchronized (seeded) {
						draw = seeded.nextInt(100);
					}
					delay = (draw < slowPercent) ? slow : usual;
				}
				Mono<String> body = Mono.just("ok\n");
				return response.header(HttpHeaderNames.CONTENT_TYPE, "text/plain")
					.header("X-Backend", String.valueOf(port))
					.sendString(delay.isZero() ? body : body.delayElement(delay))
					.then();
			}).bindNow());
		}
		System.out.println("delay backends listening on 127.0.0.1: " + String.join(" ", args));
		servers.get(0).onDispose().block();
	}

	private static String stats(Map<Integer, LongAdder> counts) {
		StringBuilder text = new StringBuilder();
		counts.forEach((port, count) -> text.append(port).append(' ').append(count.sum()).append('\n'));
		return text.toString();
	}

}
