package dev.gatewaylb.internal.upstream;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import dev.gatewaylb.internal.control.ManualControlThread;
import dev.gatewaylb.internal.settings.GatewayLbSettings;
import dev.gatewaylb.internal.settings.UpstreamSettings;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.netty.http.HttpProtocol;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The clients a service's upstream is built with: its requests in the protocol its
 * settings ask for, its WebSocket handshakes in HTTP/1.1 on connections outside the pool,
 * whatever the requests speak.
 */
class UpstreamsTests {

	private final Upstreams upstreams = new Upstreams(HttpClient::create, Upstreams.Tls.JDK,
			new ManualControlThread(new AtomicLong()));

	@ParameterizedTest(name = "{0}: {1}")
	@CsvSource(delimiter = '|', textBlock = """
			pool.protocol=http1 | HTTP11
			pool.protocol=h2c   | H2C
			http2=true          | H2 HTTP11
			""")
	void speaksTheProtocolOfTheSettingsToEndpointsAndHttp11ForHandshakes(String property, String protocols) {
		String[] pair = property.split("=");
		Upstream upstream = this.upstreams.build("svc", settings("gateway.lb.services.svc." + pair[0], pair[1]));
		try {
			assertThat(upstream.client().configuration().protocols()).containsExactlyInAnyOrder(
					Arrays.stream(protocols.split(" ")).map(HttpProtocol::valueOf).toArray(HttpProtocol[]::new));
			assertThat(upstream.socketClient().configuration().protocols()).containsExactly(HttpProtocol.HTTP11);
			assertThat(upstream.socketClient().configuration().connectionProvider())
				.as("a connection of its own for each session")
				.isSameAs(ConnectionProvider.newConnection());
		}
		finally {
			upstream.close().block();
		}
	}

	private static UpstreamSettings settings(String property, String value) {
		return GatewayLbSettings.bind(new MockEnvironment().withProperty(property, value)).forService("svc").upstream();
	}

}
