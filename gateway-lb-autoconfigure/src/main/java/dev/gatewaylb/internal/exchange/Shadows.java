package dev.gatewaylb.internal.exchange;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.control.RequestClock;
import dev.gatewaylb.internal.discovery.Member;
import dev.gatewaylb.internal.runtime.ServiceRuntime;
import dev.gatewaylb.internal.observation.AttemptContext;
import dev.gatewaylb.internal.observation.AttemptObservations;
import io.micrometer.observation.Observation;
import io.netty.buffer.ByteBuf;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.cloud.gateway.filter.headers.observation.ObservedRequestHttpHeadersFilter;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.web.server.ServerWebExchange;

/**
 * Sends a copy of an exchange's request to another service, a shadow, whose answer the
 * client never sees: through the shadow's own send path, as an attempt of the shadow
 * (picked by its algorithm, claimed in flight, sent through its pools and client, whose
 * connection reports to the attempt and settles it as it settles any other), held by a
 * lease of its own. A copy still running the shadow's {@code timeouts.response} after it
 * started is given up, charged to nobody ({@link Attempt#cancel}).
 */
public final class Shadows {

	/**
	 * The header every mirrored request carries, naming the service it was copied from.
	 */
	public static final String MIRROR_HEADER = "X-Gateway-Mirror";

	private final @Nullable AttemptObservations observations;

	private final Supplier<List<HttpHeadersFilter>> headersFilters;

	/**
	 * Creates the sender.
	 * @param headersFilters the gateway's request header filters, which a copy's headers
	 * go through as the exchange's own do, but for the one that starts an observation
	 * (asked once, at the first copy: they are beans that may need the filters')
	 */
	public Shadows(Supplier<List<HttpHeadersFilter>> headersFilters) {
		this(headersFilters, null);
	}

	/**
	 * Creates the sender of a gateway whose copies are observed.
	 * @param headersFilters as above
	 * @param observations starts each copy's observation, or {@code null}
	 */
	public Shadows(Supplier<List<HttpHeadersFilter>> headersFilters, @Nullable AttemptObservations observations) {
		this.headersFilters = headersFilters;
		this.observations = observations;
	}

	/**
	 * Returns the request header filters a copy's headers go through: the gateway's, less
	 * Spring Cloud Gateway's observation filter, which starts an
	 * {@code http.client.requests} observation for every request it filters and leaves it
	 * on the exchange for the answer's header filters to stop: the exchange's own attempt
	 * then replaces it with its own, and nothing would ever stop the copy's.
	 * @param filters the gateway's header filters
	 * @return the filters for a copy's headers
	 */
	static List<HttpHeadersFilter> withoutObservation(List<HttpHeadersFilter> filters) {
		return filters.stream().filter((filter) -> !(filter instanceof ObservedRequestHttpHeadersFilter)).toList();
	}

	/**
	 * Returns the headers an exchange's request goes out with (hop-by-hop ones removed,
	 * {@code X-Forwarded-*} added), less what the copy's own request sets and the headers
	 * the service strips from its mirrors ({@code mirror.strip-headers}), with
	 * {@value #MIRROR_HEADER} naming the primary service.
	 * @param exchange the exchange
	 * @param strip the headers the copy goes without
	 * @param primary the primary service's id
	 * @return the headers
	 */
	HttpHeaders headers(ServerWebExchange exchange, List<String> strip, String primary) {
		HttpHeaders filtered = new HttpHeaders();
		filtered.putAll(HttpHeadersFilter.filterRequest(withoutObservation(this.headersFilters.get()), exchange));
		filtered.remove(HttpHeaders.HOST);
		filtered.remove(HttpHeaders.CONTENT_LENGTH);
		filtered.remove(HttpHeaders.TRANSFER_ENCODING);
		for (String name : strip) {
			filtered.remove(name);
		}
		// Tells the shadow that this is a copy and whose: it must not act on it as on a
		// client's request (charge, send mail), and it may tell the copies apart in its
		// logs.
		filtered.set(MIRROR_HEADER, primary);
		return filtered;
	}

	/**
	 * Sends a copy to a shadow.
	 * @param shadow the shadow's runtime
	 * @param method the method
	 * @param url the URL of the copy at an endpoint of the shadow
	 * @param headers the headers
	 * @param body the body, or {@code null} for none
	 * @param onBody told each chunk of the answer's body, on the connection's event loop
	 * @param parent the primary exchange's observation, or {@code null}
	 * @return the shadow's status once its whole answer arrived; empty when it failed,
	 * had no endpoint to pick, or was given up at its deadline
	 */
	Mono<Integer> send(ServiceRuntime shadow, HttpMethod method, Function<Member, URI> url, HttpHeaders headers,
			byte @Nullable [] body, Consumer<ByteBuf> onBody, @Nullable Observation parent) {
		Snapshot<Member> snapshot = shadow.snapshot();
		int index = snapshot.select(null);
		if (index < 0) {
			return Mono.empty();
		}
		ExchangeLease lease = new ExchangeLease();
		Attempt attempt = new Attempt(snapshot.claim(index), snapshot.ewmaDecayNanos(), shadow, snapshot.value(index),
				lease, false, 0, null, -1, false);
		AttemptObservations observations = this.observations;
		if (observations != null && observations.active()) {
			// Before the lease holds it, as every attempt's.
			AttemptContext context = new AttemptContext(shadow.id(),
					AttemptObservations.name(shadow.settings().balancer().algorithm()), AttemptContext.MIRROR,
					attempt.endpoint().address(), 1, null, null, null);
			attempt.observe(observations.start(context, parent));
		}
		lease.hold(attempt);
		Mono<Integer> answer = shadow.upstream()
			.client()
			.headers((out) -> headers.forEach(out::add))
			.request(io.netty.handler.codec.http.HttpMethod.valueOf(method.name()))
			.uri(url.apply(attempt.member()))
			.send((request, out) -> (body != null) ? out.sendByteArray(Mono.just(body)) : out)
			.response((response, content) -> {
				int status = response.status().code();
				attempt.answered(status);
				return content.doOnNext(onBody).then(Mono.just(status));
			})
			.contextWrite(attempt.context())
			.next();
		Duration deadline = shadow.settings().upstream().responseTimeout();
		if (!deadline.isZero()) {
			// Given up by the gateway: settled as cancelled before the cancellation
			// reaches
			// the connection, whose end then finds it settled.
			answer = answer.takeUntilOther(timer(shadow.clock(), deadline).doOnNext((tick) -> attempt.cancel()));
		}
		return answer.onErrorResume((error) -> {
			attempt.failed(error);
			return Mono.empty();
		}).doFinally((signal) -> lease.close());
	}

	/**
	 * Returns a timer on the request clock: one tick after {@code delay}.
	 */
	private static Mono<Long> timer(RequestClock clock, Duration delay) {
		return Mono.create((sink) -> {
			RequestClock.Timer timer = clock.schedule(() -> sink.success(0L), delay.toNanos(), TimeUnit.NANOSECONDS);
			sink.onDispose(timer::cancel);
		});
	}

}
