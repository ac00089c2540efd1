package dev.gatewaylb.gateway;

import java.net.URI;
import java.util.List;
import java.util.Map;

import dev.gatewaylb.internal.runtime.ServiceRuntime;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.RouteToRequestUrlFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.UriComponentsBuilder;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A route whose {@code lb://} host comes from a request header, on a real gateway: ids no
 * route, configuration, split or discovery knows are answered 503 and leave nothing
 * behind (no runtime, no meter, no Spring Cloud LoadBalancer child context); an id only
 * discovery lists is served.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@Import(RequestNamedServicesIT.HostFromHeader.class)
class RequestNamedServicesIT extends GatewayIntegrationTest {

	static final TestBackend named = TestBackend.start("named");

	static final TestBackend listed = TestBackend.start("listed");

	@Autowired
	MeterRegistry meters;

	@Autowired
	LoadBalancerClientFactory clientFactory;

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("named")
			.instances("named", List.of(named))
			.instances("listed", List.of(listed));
	}

	@AfterAll
	static void stopBackends() {
		named.close();
		listed.close();
	}

	@Test
	void aThousandUnknownIdsCreateNoRuntimeAndAnIdDiscoveryListsIsServed() {
		assertThat(this.client.getNow("/named/").backend()).isEqualTo("named");
		List<String> before = ids();
		List<Integer> statuses = Flux.range(0, 1000)
			.flatMap((i) -> this.client.get("/named/", Map.of("X-Service", "ghost-" + i)), 16)
			.map(GatewayClient.Answer::status)
			.distinct()
			.collectList()
			.block();
		assertThat(statuses).containsExactly(503);
		assertThat(ids()).isEqualTo(before).noneMatch((id) -> id.startsWith("ghost"));
		assertThat(this.runtimes.unknownNamed()).isGreaterThanOrEqualTo(1000);
		assertThat(this.meters.get("gateway.lb.unknown.services").functionCounter().count())
			.isGreaterThanOrEqualTo(1000);
		assertThat(this.meters.getMeters())
			.noneMatch((meter) -> String.valueOf(meter.getId().getTag("service")).startsWith("ghost"));
		assertThat(this.clientFactory.getContextNames()).noneMatch((name) -> name.startsWith("ghost"));

		GatewayClient.Answer answer = this.client.getNow("/named/", Map.of("X-Service", "listed"));
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.backend()).isEqualTo("listed");
		assertThat(ids()).contains("listed");
	}

	private List<String> ids() {
		return this.runtimes.all().stream().map(ServiceRuntime::id).toList();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class HostFromHeader {

		/**
		 * What a route that lets the request name its service does: the {@code lb://}
		 * URL's host replaced by a header, after Spring Cloud Gateway built the URL.
		 */
		@Bean
		HostFromHeaderFilter hostFromHeader() {
			return new HostFromHeaderFilter();
		}

	}

	static final class HostFromHeaderFilter implements GlobalFilter, Ordered {

		@Override
		public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
			String service = exchange.getRequest().getHeaders().getFirst("X-Service");
			URI url = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
			if (service != null && url != null) {
				exchange.getAttributes()
					.put(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR,
							UriComponentsBuilder.fromUri(url).host(service).build(true).toUri());
			}
			return chain.filter(exchange);
		}

		@Override
		public int getOrder() {
			return RouteToRequestUrlFilter.ROUTE_TO_URL_FILTER_ORDER + 1;
		}

	}

}
