package dev.gatewaylb.internal.exchange;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.rollout.FleetDecisions;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.runtime.SplitCounters;
import dev.gatewaylb.internal.rollout.SplitRollouts;
import dev.gatewaylb.internal.runtime.TestRuntimes;
import dev.gatewaylb.internal.split.StickyCookie;
import dev.gatewaylb.gateway.filter.AttemptFilter;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;

/**
 * Exchanges of service {@code svc} run by their owner without a socket: the chain after
 * the attempt filter is scripted, each send waiting for the test to say what its upstream
 * did (headers, an error, nothing), on the test's thread. The balancer clock is the
 * test's, and the event loop a hedge timer is armed on is an embedded one whose time
 * stands still until the test moves it. Close it.
 */
final class ScriptedExchanges implements AutoCloseable {

	/**
	 * The connection's peer of an exchange started without one: in 192.0.2.0/24.
	 */
	static final InetSocketAddress PEER = new InetSocketAddress("192.0.2.10", 40000);

	final TestRuntimes fixture;

	final ServiceRuntime runtime;

	final ProxyServices services;

	final AttemptFilter filter;

	/**
	 * The event loop every scripted upstream connection is on.
	 */
	final EmbeddedChannel loop = new EmbeddedChannel();

	/**
	 * Creates the service with endpoints {@code a, b, ...} of weight 1.
	 */
	ScriptedExchanges(Map<String, Object> properties, String... endpoints) {
		this.fixture = new TestRuntimes(properties);
		for (String endpoint : endpoints) {
			this.fixture.instances.add(TestRuntimes.instance(endpoint, 1));
		}
		this.runtime = this.fixture.runtime("svc");
		this.loop.freezeTime();
		SplitRollouts rollouts = new SplitRollouts(this.fixture.control, () -> 0L, () -> FleetDecisions.NONE);
		StickyCookie affinity = new StickyCookie(() -> 0L, 42);
		SplitCounters counters = new SplitCounters();
		this.services = new ProxyServices(this.fixture.settings, this.fixture.runtimes,
				new SplitRouting(affinity, counters, rollouts), false, new Shadows(java.util.List::of));
		this.filter = new AttemptFilter(this.fixture.settings, this.fixture.runtimes, affinity, counters, rollouts,
				false);
	}

	Snapshot<Member> snapshot() {
		return this.fixture.runtimes.find("svc").snapshot();
	}

	/**
	 * Starts an exchange of {@code method} to {@code lb://svc/x}.
	 */
	Run start(HttpMethod method) {
		return start(method, "X-Test", "");
	}

	/**
	 * Starts an exchange of {@code method} to {@code lb://svc/x} with one header.
	 */
	Run start(HttpMethod method, String header, String value) {
		return start(method, header, value, PEER);
	}

	/**
	 * Starts an exchange of {@code method} to {@code lb://svc/x} with one header, from a
	 * connection whose peer is {@code peer}.
	 */
	Run start(HttpMethod method, String header, String value, InetSocketAddress peer) {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.method(method, URI.create("http://gateway/x"))
				.header(header, value)
				.remoteAddress(peer));
		URI url = URI.create("lb://svc/x");
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, url);
		ExchangeLease lease = new ExchangeLease();
		Run run = new Run(exchange, lease);
		ProxiedExchange owner = new ProxiedExchange(this.services, lease, exchange, run, url, null);
		run.subscription = owner.run().subscribe(null, run.error::set, () -> run.completed = true);
		return run;
	}

	/**
	 * Starts an exchange of {@code method} to {@code lb://svc/x} through the attempt
	 * filter, as the gateway's chain reaches it.
	 */
	Run startThroughTheFilter(HttpMethod method) {
		MockServerWebExchange exchange = MockServerWebExchange
			.from(MockServerHttpRequest.method(method, URI.create("http://gateway/x")));
		exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, URI.create("lb://svc/x"));
		ExchangeLease lease = new ExchangeLease();
		exchange.getAttributes().put(ExchangeLease.ATTRIBUTE, lease);
		Run run = new Run(exchange, lease);
		filterAgain(run);
		return run;
	}

	/**
	 * Runs the attempt filter on the exchange (again), as a route's own {@code Retry}
	 * filter does.
	 */
	void filterAgain(Run run) {
		run.exchange.getAttributes().put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR, URI.create("lb://svc/x"));
		run.subscription = this.filter.filter(run.exchange, run)
			.subscribe(null, run.error::set, () -> run.completed = true);
	}

	/**
	 * Runs the control thread's hedge-window job, a second on: the latencies recorded so
	 * far are in the service's hedge delay.
	 */
	void rollHedgeWindow() {
		this.fixture.advance(Duration.ofSeconds(1));
	}

	/**
	 * Moves the embedded event loop's time on and runs the timers that became due.
	 */
	void elapse(long nanos) {
		this.fixture.advance(Duration.ofNanos(nanos));
		this.loop.advanceTimeBy(nanos, TimeUnit.NANOSECONDS);
		this.loop.runScheduledPendingTasks();
	}

	/**
	 * Returns the requests in flight over every endpoint.
	 */
	int inFlight() {
		Snapshot<Member> snapshot = snapshot();
		int total = 0;
		for (int i = 0; i < snapshot.size(); i++) {
			total += snapshot.state(i).inFlight();
		}
		return total;
	}

	@Override
	public void close() {
		this.loop.finishAndReleaseAll();
		this.fixture.close();
	}

	/**
	 * One exchange: the chain after the attempt filter, and what came of it.
	 */
	final class Run implements GatewayFilterChain {

		final MockServerWebExchange exchange;

		final ExchangeLease lease;

		final List<Send> sends = new CopyOnWriteArrayList<>();

		final AtomicReference<@Nullable Throwable> error = new AtomicReference<>();

		volatile boolean completed;

		@Nullable Disposable subscription;

		Run(MockServerWebExchange exchange, ExchangeLease lease) {
			this.exchange = exchange;
			this.lease = lease;
		}

		@Override
		public Mono<Void> filter(ServerWebExchange exchange) {
			Attempt attempt = exchange.getAttribute(Attempt.ATTRIBUTE);
			if (attempt == null) {
				throw new IllegalStateException("a send without an attempt");
			}
			Send send = new Send(exchange, attempt);
			this.sends.add(send);
			return send.sink.asMono();
		}

		Send send(int index) {
			return this.sends.get(index);
		}

		/**
		 * Returns the endpoints the sends went to, in order.
		 */
		List<String> endpoints() {
			List<String> endpoints = new ArrayList<>();
			this.sends.forEach((send) -> endpoints.add(send.endpoint()));
			return endpoints;
		}

		/**
		 * Ends the exchange as the release filter would when the body is written.
		 */
		void end() {
			this.lease.close();
		}

		/**
		 * The client goes away: as the release filter sees a cancellation.
		 */
		void cancel() {
			this.lease.clientGone();
			Disposable subscription = this.subscription;
			if (subscription != null) {
				subscription.dispose();
			}
			this.lease.close();
		}

		int status() {
			HttpStatusCode status = this.exchange.getResponse().getStatusCode();
			return (status != null) ? status.value() : 0;
		}

		String body() {
			return this.exchange.getResponse().getBodyAsString().block();
		}

	}

	/**
	 * One request the chain was asked to send, and the test's script for its upstream.
	 */
	final class Send {

		final ServerWebExchange exchange;

		final Attempt attempt;

		final Sinks.Empty<Void> sink = Sinks.empty();

		Send(ServerWebExchange exchange, Attempt attempt) {
			this.exchange = exchange;
			this.attempt = attempt;
		}

		String endpoint() {
			return this.attempt.endpoint().address().substring(0, this.attempt.endpoint().address().indexOf(':'));
		}

		/**
		 * The request went out: the client's callbacks up to the request sent.
		 */
		Send sent() {
			EventLoop eventLoop = ScriptedExchanges.this.loop.eventLoop();
			this.attempt.requestPrepared(eventLoop);
			this.attempt.requestSent();
			return this;
		}

		/**
		 * The headers arrived with {@code status}: what the routing filter does with
		 * them.
		 */
		void answers(int status) {
			if (this.attempt.phase() == dev.gatewaylb.internal.upstream.Outcome.Phase.CONNECTING) {
				sent();
			}
			this.attempt.responseReceived(status);
			this.exchange.getResponse().setStatusCode(HttpStatusCode.valueOf(status));
			this.sink.tryEmitEmpty();
		}

		/**
		 * The body arrived whole.
		 */
		void completes() {
			this.attempt.responseCompleted();
		}

		/**
		 * The attempt failed with {@code error} where it is now.
		 */
		void fails(Throwable error) {
			this.sink.tryEmitError(error);
		}

		Map<String, Object> attributes() {
			return new HashMap<>(this.exchange.getAttributes());
		}

	}

}
