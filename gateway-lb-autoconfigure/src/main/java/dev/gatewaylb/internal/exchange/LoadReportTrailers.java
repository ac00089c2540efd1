package dev.gatewaylb.internal.exchange;

import dev.gatewaylb.internal.loadreports.LoadReportsState;
import dev.gatewaylb.internal.loadreports.core.LoadReportParser;

import org.springframework.cloud.gateway.filter.headers.HttpHeadersFilter;
import org.springframework.cloud.gateway.filter.headers.TrailerHeadersFilter;
import org.springframework.http.HttpHeaders;
import org.springframework.web.server.ServerWebExchange;

/**
 * Reads the load report a gRPC endpoint sends in its trailers
 * ({@code endpoint-load-metrics-bin}, the binary {@code OrcaLoadReport} of per-call
 * reporting), for a service with {@code load-reports.enabled}, and keeps it from the
 * client as the headers' reports are kept. Spring Cloud Gateway's response writer hands
 * every {@link TrailerHeadersFilter} the endpoint's trailers once the body is through;
 * the exchange then holds the attempt whose answer it was (a hedged race's winner's). A
 * service that does not read reports gets its trailers as they came.
 */
public final class LoadReportTrailers implements HttpHeadersFilter, TrailerHeadersFilter {

	@Override
	public HttpHeaders trailers(HttpHeaders trailers, ServerWebExchange exchange) {
		if (!trailers.containsHeader(LoadReportParser.BINARY_HEADER)
				&& !trailers.containsHeader(LoadReportParser.HEADER)
				|| !(exchange.getAttribute(Attempt.ATTRIBUTE) instanceof Attempt attempt)) {
			return trailers;
		}
		LoadReportsState reports = attempt.runtime().feature(LoadReportsState.class);
		if (!reports.settings().enabled()) {
			return trailers;
		}
		HttpHeaders kept = new HttpHeaders();
		kept.putAll(trailers);
		// The status was counted with the headers: the trailers' report only.
		reports.trailers(attempt.member().endpoint().address(), kept);
		return kept;
	}

	@Override
	public HttpHeaders filter(HttpHeaders input, ServerWebExchange exchange) {
		return input;
	}

	/**
	 * Never among the request's or the response's header filters: trailers only.
	 */
	@Override
	public boolean supports(Type type) {
		return false;
	}

}
