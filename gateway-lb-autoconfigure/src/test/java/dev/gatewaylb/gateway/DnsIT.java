package dev.gatewaylb.gateway;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.DatagramChannel;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.netty.handler.codec.dns.DatagramDnsQuery;
import io.netty.handler.codec.dns.DatagramDnsQueryDecoder;
import io.netty.handler.codec.dns.DatagramDnsResponse;
import io.netty.handler.codec.dns.DatagramDnsResponseEncoder;
import io.netty.handler.codec.dns.DefaultDnsRawRecord;
import io.netty.handler.codec.dns.DnsQuestion;
import io.netty.handler.codec.dns.DnsRecordType;
import io.netty.handler.codec.dns.DnsResponseCode;
import io.netty.handler.codec.dns.DnsSection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Hostname endpoints resolved through {@code gateway.lb.dns}, against a small DNS server
 * on loopback that the test runs and counts the questions of: the names resolve through
 * the servers configured (the system's resolvers know nothing of them), and a name that
 * does not resolve is asked once per {@code negative-ttl}, not once per request.
 */
@SpringBootTest(classes = TestGateway.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class DnsIT extends GatewayIntegrationTest {

	static final DnsServer dns = new DnsServer();

	static final TestBackend backend = TestBackend.start("named");

	@DynamicPropertySource
	static void gateway(DynamicPropertyRegistry registry) {
		TestGateway.properties(registry)
			.route("named")
			.uris("named", List.of("http://good.gwlb.test:" + backend.port()))
			.route("nowhere")
			.uris("nowhere", List.of("http://nowhere.gwlb.test:59999"))
			.set("gateway.lb.services.nowhere.retry.attempts", 0)
			.set("gateway.lb.services.nowhere.health.passive.consecutive-failures", 0)
			.set("gateway.lb.dns.servers", "127.0.0.1:" + dns.port());
	}

	@AfterAll
	static void stop() {
		backend.close();
		dns.close();
	}

	@Test
	void aHostnameEndpointResolvesThroughTheConfiguredServers() {
		for (int i = 0; i < 5; i++) {
			GatewayClient.Answer answer = this.client.getNow("/named/");
			assertThat(answer.status()).isEqualTo(200);
			assertThat(answer.backend()).isEqualTo("named");
		}
		assertThat(dns.questions("good.gwlb.test")).as("questions about the name, of all %s", dns.questions)
			.isPositive();
	}

	@Test
	void aNameThatDoesNotResolveIsAskedOncePerNegativeTtl() {
		assertThat(this.client.getNow("/nowhere/").status()).isEqualTo(502);
		long firstFailure = System.nanoTime();
		int asked = dns.questions("nowhere.gwlb.test");
		assertThat(asked).as("questions of the first resolution, of all %s", dns.questions).isPositive();
		for (int i = 0; i < 20; i++) {
			assertThat(this.client.getNow("/nowhere/").status()).isEqualTo(502);
		}
		assertThat(dns.questions("nowhere.gwlb.test")).as("questions after 20 more requests, the failure cached")
			.isEqualTo(asked);
		// Once the failure has been kept for negative-ttl (2s), the next request asks
		// again.
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> {
			this.client.getNow("/nowhere/");
			return dns.questions("nowhere.gwlb.test") > asked;
		});
		assertThat((System.nanoTime() - firstFailure) / 1_000_000).as("ms until it was asked again")
			.isGreaterThanOrEqualTo(1_000);
	}

	/**
	 * A DNS server on a loopback UDP port: {@code good.gwlb.test} is 127.0.0.1 (no IPv6
	 * address), every other name does not exist. Counts the questions by name, search
	 * domains the resolver appends included.
	 */
	static final class DnsServer implements AutoCloseable {

		private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());

		private final Map<String, AtomicInteger> questions = new ConcurrentHashMap<>();

		private final Channel channel;

		DnsServer() {
			this.channel = new Bootstrap().group(this.group)
				.channel(NioDatagramChannel.class)
				.handler(new ChannelInitializer<DatagramChannel>() {

					@Override
					protected void initChannel(DatagramChannel channel) {
						channel.pipeline()
							.addLast(new DatagramDnsQueryDecoder(), new DatagramDnsResponseEncoder(), new Answers());
					}

				})
				.bind("127.0.0.1", 0)
				.syncUninterruptibly()
				.channel();
		}

		int port() {
			return ((java.net.InetSocketAddress) this.channel.localAddress()).getPort();
		}

		/**
		 * Returns the questions asked so far about {@code name}, with or without a search
		 * domain after it.
		 */
		int questions(String name) {
			return this.questions.entrySet()
				.stream()
				.filter((entry) -> entry.getKey().startsWith(name + "."))
				.mapToInt((entry) -> entry.getValue().get())
				.sum();
		}

		@Override
		public void close() {
			this.channel.close().syncUninterruptibly();
			this.group.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
		}

		private final class Answers extends SimpleChannelInboundHandler<DatagramDnsQuery> {

			@Override
			protected void channelRead0(ChannelHandlerContext ctx, DatagramDnsQuery query) {
				DnsQuestion question = query.recordAt(DnsSection.QUESTION);
				String name = question.name().toLowerCase(Locale.ROOT);
				DnsServer.this.questions.computeIfAbsent(name, (key) -> new AtomicInteger()).incrementAndGet();
				DatagramDnsResponse response = new DatagramDnsResponse(query.recipient(), query.sender(), query.id());
				response.setRecursionAvailable(true);
				response.addRecord(DnsSection.QUESTION, question);
				if (name.equals("good.gwlb.test.")) {
					if (question.type() == DnsRecordType.A) {
						response.addRecord(DnsSection.ANSWER, new DefaultDnsRawRecord(question.name(), DnsRecordType.A,
								60, Unpooled.wrappedBuffer(new byte[] { 127, 0, 0, 1 })));
					}
				}
				else {
					response.setCode(DnsResponseCode.NXDOMAIN);
				}
				ctx.writeAndFlush(response);
			}

		}

	}

}
