package dev.gatewaylb.gateway;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
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

/**
 * A DNS server on a loopback UDP port, for {@code gateway.lb.dns.servers}: the names it
 * is given have their addresses (A and AAAA records, in the order given), a name under
 * {@code silent.} gets no answer at all, every other name does not exist. Counts the
 * questions by name, search domains the resolver appends included.
 */
final class TestDnsServer implements AutoCloseable {

	private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());

	private final Map<String, List<InetAddress>> names;

	private final Map<String, AtomicInteger> questions = new ConcurrentHashMap<>();

	private final Channel channel;

	/**
	 * Starts a server.
	 * @param names the addresses of each name it knows, without a trailing dot
	 */
	TestDnsServer(Map<String, List<InetAddress>> names) {
		this.names = Map.copyOf(names);
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

	/**
	 * Returns the address of an IP literal.
	 */
	static InetAddress ip(String literal) {
		try {
			return InetAddress.getByName(literal);
		}
		catch (java.net.UnknownHostException ex) {
			throw new IllegalArgumentException(literal, ex);
		}
	}

	int port() {
		return ((InetSocketAddress) this.channel.localAddress()).getPort();
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
	public String toString() {
		return this.questions.toString();
	}

	@Override
	public void close() {
		this.channel.close().syncUninterruptibly();
		this.group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
	}

	private final class Answers extends SimpleChannelInboundHandler<DatagramDnsQuery> {

		@Override
		protected void channelRead0(ChannelHandlerContext ctx, DatagramDnsQuery query) {
			DnsQuestion question = query.recordAt(DnsSection.QUESTION);
			String name = question.name().toLowerCase(Locale.ROOT);
			TestDnsServer.this.questions.computeIfAbsent(name, (key) -> new AtomicInteger()).incrementAndGet();
			DatagramDnsResponse response = new DatagramDnsResponse(query.recipient(), query.sender(), query.id());
			response.setRecursionAvailable(true);
			if (name.startsWith("silent.")) {
				// A server that has gone quiet: the resolver waits for its query timeout.
				return;
			}
			response.addRecord(DnsSection.QUESTION, question);
			List<InetAddress> addresses = TestDnsServer.this.names.get(name.substring(0, name.length() - 1));
			if (addresses != null) {
				for (InetAddress address : addresses) {
					boolean v4 = address instanceof Inet4Address;
					if (question.type() == (v4 ? DnsRecordType.A : DnsRecordType.AAAA)) {
						response.addRecord(DnsSection.ANSWER,
								new DefaultDnsRawRecord(question.name(), v4 ? DnsRecordType.A : DnsRecordType.AAAA, 60,
										Unpooled.wrappedBuffer(address.getAddress())));
					}
				}
			}
			else {
				response.setCode(DnsResponseCode.NXDOMAIN);
			}
			ctx.writeAndFlush(response);
		}

	}

}
