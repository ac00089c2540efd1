package dev.gatewaylb.gateway;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import io.netty.channel.Channel;
import io.netty.util.Version;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.cloud.gateway.config.HttpClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transport the gateway under test really runs on, checked against the one the
 * Failsafe execution asked for in {@code gatewaylb.transport} ({@code nio}, {@code epoll}
 * or {@code io_uring}): the server's listening channel, the connection a client request
 * arrived on and the upstream connection gateway-lb proxied it on. An execution whose
 * classpath or properties silently fall back to another transport (NIO most often) fails
 * here instead of passing the other tests on the wrong one.
 * <p>
 * Runs only in the transport executions of the build, which set the property.
 */
@SpringBootTest(classes = { TestGateway.class, TransportIT.ChannelProbe.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@EnabledIfSystemProperty(named = TransportIT.EXPECTED, matches = ".+")
class TransportIT extends GatewayIntegrationTest {

	static final String EXPECTED = "gatewaylb.transport";

	private static final Log logger = LogFactory.getLog(TransportIT.class);

	static final List<TestBackend> backends = List.of(TestBackend.start("transport"));

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry).route("transport").instances("transport", backends);
	}

	@AfterAll
	static void stopBackends() {
		backends.forEach(TestBackend::close);
	}

	@Test
	void servesAndProxiesOnTheTransportTheExecutionAskedFor() {
		String expected = System.getProperty(EXPECTED).toLowerCase(Locale.ROOT);
		GatewayClient.Answer answer = this.client.getNow("/transport/hello");
		assertThat(answer.status()).isEqualTo(200);
		assertThat(answer.backend()).isEqualTo("transport");

		Channel listening = ChannelProbe.listening.get();
		logger.info("Gateway transport: listening on " + describe(listening) + ", accepted " + ChannelProbe.accepted
				+ ", upstream " + ChannelProbe.upstream + "; Netty "
				+ Version.identify().get("netty-transport").artifactVersion()
				+ ", io.netty.iouring.pollAddMultishotEnabled="
				+ System.getProperty("io.netty.iouring.pollAddMultishotEnabled", "(default)"));
		assertThat(listening).as("the gateway's listening channel").isNotNull();
		assertThat(transport(listening.getClass().getName())).as(describe(listening)).isEqualTo(expected);
		assertThat(ChannelProbe.accepted).as("transports of the connections the gateway accepted")
			.containsExactly(expected);
		assertThat(ChannelProbe.upstream).as("transports of the gateway's upstream connections")
			.containsExactly(expected);
	}

	private static String describe(@Nullable Channel channel) {
		return (channel != null) ? channel.getClass().getName() + " on " + channel.eventLoop().getClass().getName()
				: "nothing";
	}

	/**
	 * Names the transport of a channel class by its package, so that this test compiles
	 * and runs without the native transports on its classpath.
	 */
	static String transport(String channelClass) {
		if (channelClass.startsWith("io.netty.channel.uring.")) {
			return "io_uring";
		}
		if (channelClass.startsWith("io.netty.channel.epoll.")) {
			return "epoll";
		}
		if (channelClass.startsWith("io.netty.channel.kqueue.")) {
			return "kqueue";
		}
		if (channelClass.startsWith("io.netty.channel.socket.nio.")) {
			return "nio";
		}
		return "unknown: " + channelClass;
	}

	/**
	 * Records the gateway's listening channel, the transports of the connections it
	 * accepts and of those it opens upstream.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class ChannelProbe {

		static final AtomicReference<@Nullable Channel> listening = new AtomicReference<>();

		static final Set<String> accepted = ConcurrentHashMap.newKeySet();

		static final Set<String> upstream = ConcurrentHashMap.newKeySet();

		@Bean
		NettyServerCustomizer recordServerChannels() {
			return (server) -> server.doOnBound((bound) -> listening.set(bound.channel()))
				.doOnConnection((connection) -> accepted.add(transport(connection.channel().getClass().getName())));
		}

		@Bean
		HttpClientCustomizer recordUpstreamChannels() {
			return (client) -> client
				.doOnConnected((connection) -> upstream.add(transport(connection.channel().getClass().getName())));
		}

	}

}
