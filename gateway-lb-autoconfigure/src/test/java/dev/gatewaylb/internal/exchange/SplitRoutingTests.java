package dev.gatewaylb.internal.exchange;

import java.net.InetSocketAddress;
import java.util.List;

import dev.gatewaylb.internal.settings.SplitSettings;
import dev.gatewaylb.request.Cidr;
import dev.gatewaylb.internal.split.Split;
import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link SplitRouting} believes of a request's headers; the routing itself is
 * SplitIT's, on real sockets.
 */
class SplitRoutingTests {

	private static final List<Cidr> TRUSTED_PROXIES = List.of(Cidr.valueOf("10.0.0.0/8"));

	@Test
	void believesForwardedProtoFromATrustedProxyOnly() {
		MockServerHttpRequest request = MockServerHttpRequest.get("http://gateway/")
			.header("X-Forwarded-Proto", "https, http")
			.build();
		assertThat(SplitRouting.cameOverHttps(request, peer("10.1.2.3"), TRUSTED_PROXIES)).isTrue();
		assertThat(SplitRouting.cameOverHttps(request, peer("203.0.113.9"), TRUSTED_PROXIES)).isFalse();
		assertThat(SplitRouting.cameOverHttps(request, peer("10.1.2.3"), List.of())).isFalse();
		assertThat(SplitRouting.cameOverHttps(request, null, TRUSTED_PROXIES)).isFalse();
	}

	@Test
	void takesTheFirstForwardedProtoAndAnHttpsUrlAsIs() {
		MockServerHttpRequest plain = MockServerHttpRequest.get("http://gateway/")
			.header("X-Forwarded-Proto", "http, https")
			.build();
		assertThat(SplitRouting.cameOverHttps(plain, peer("10.1.2.3"), TRUSTED_PROXIES)).isFalse();
		MockServerHttpRequest secure = MockServerHttpRequest.get("https://gateway/").build();
		assertThat(SplitRouting.cameOverHttps(secure, peer("203.0.113.9"), List.of())).isTrue();
	}

	@Test
	void removesTheOverrideHeaderAndLeavesAnExchangeWithoutItAlone() {
		SplitSettings split = new SplitSettings(Split.of("shop", List.of(new Split.Target("a", 1))), null,
				"X-Gateway-Target", List.of(), null);
		ServerWebExchange carrying = MockServerWebExchange
			.from(MockServerHttpRequest.get("/").header("X-Gateway-Target", "a").header("X-Other", "kept"));
		ServerWebExchange stripped = SplitRouting.withoutOverride(carrying, split);
		assertThat(stripped.getRequest().getHeaders().containsHeader("X-Gateway-Target")).isFalse();
		assertThat(stripped.getRequest().getHeaders().getFirst("X-Other")).isEqualTo("kept");
		ServerWebExchange clean = MockServerWebExchange.from(MockServerHttpRequest.get("/"));
		assertThat(SplitRouting.withoutOverride(clean, split)).isSameAs(clean);
	}

	private static InetSocketAddress peer(String address) {
		return new InetSocketAddress(address, 40000);
	}

}
