package dev.gatewaylb.internal.upstream;

import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.internal.control.ManualControlThread;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.UpstreamSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;
import reactor.netty.resources.ConnectionPoolMetrics;

import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A pool opened by a real request, on loopback: the upstream counts it at once, on the
 * event loop that opened it, and the listeners (the meters) hear of it on the control
 * thread only, here the test's own thread when it runs what is due.
 */
class PoolListenerIT {

	private final DisposableServer server = HttpServer.create()
		.host("127.0.0.1")
		.port(0)
		.handle((request, response) -> response.sendString(Mono.just("ok")))
		.bindNow();

	private final ManualControlThread control = new ManualControlThread(new AtomicLong());

	private final Upstreams upstreams = new Upstreams(HttpClient::create, Upstreams.Tls.JDK, this.control);

	private final List<String> heard = new CopyOnWriteArrayList<>();

	@AfterEach
	void stop() {
		this.server.disposeNow();
	}

	@Test
	void tellsTheListenersOfAPoolOnTheControlThreadAndNeverOnTheEventLoopThatOpenedIt() {
		this.upstreams.addListener(new Upstreams.PoolListener() {

			@Override
			public void opened(String serviceId, String poolName, String id, SocketAddress remoteAddress,
					ConnectionPoolMetrics metrics) {
				PoolListenerIT.this.heard.add("opened " + serviceId + " " + poolName + " on " + thread());
			}

			@Override
			public void closed(String serviceId, String poolName, String id, SocketAddress remoteAddress) {
				PoolListenerIT.this.heard.add("closed " + serviceId + " " + poolName + " on " + thread());
			}

		});
		Upstream upstream = this.upstreams.build("svc", settings());
		String answer = upstream.client()
			.get()
			.uri("http://127.0.0.1:" + this.server.port() + "/")
			.responseContent()
			.aggregate()
			.asString()
			.block(Duration.ofSeconds(10));
		assertThat(answer).isEqualTo("ok");
		assertThat(upstream.counts().endpoints()).as("counted on the event loop, at once").isOne();
		assertThat(this.heard).as("no listener ran on the event loop").isEmpty();
		this.control.runDue();
		String test = thread();
		assertThat(this.heard).containsExactly("opened svc gateway-lb-svc on " + test);

		upstream.close().block(Duration.ofSeconds(10));
		assertThat(upstream.counts().endpoints()).isZero();
		this.control.runDue();
		assertThat(this.heard).containsExactly("opened svc gateway-lb-svc on " + test,
				"closed svc gateway-lb-svc on " + test);
	}

	private static String thread() {
		return Thread.currentThread().getName();
	}

	private static UpstreamSettings settings() {
		return GatewayLbSettings.bind(new MockEnvironment()).forService("svc").upstream();
	}

}
