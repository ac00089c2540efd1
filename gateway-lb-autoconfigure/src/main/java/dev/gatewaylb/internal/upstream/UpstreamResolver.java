package dev.gatewaylb.internal.upstream;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import io.netty.resolver.ResolvedAddressTypes;
import io.netty.resolver.dns.DefaultDnsCache;
import io.netty.resolver.dns.DnsAddressResolverGroup;
import io.netty.resolver.dns.SequentialDnsServerAddressStreamProvider;
import io.netty.util.NetUtil;
import reactor.netty.http.HttpResources;
import reactor.netty.resources.LoopResources;
import reactor.netty.transport.NameResolverProvider;

/**
 * The one name resolver of every upstream ({@code gateway.lb.dns}): Reactor Netty's
 * asynchronous DNS resolver, which never blocks a thread, on the gateway's own event
 * loops, with one cache for all of them and every service.
 * <p>
 * The cache keeps an answer for its TTL, bounded by {@code min-ttl} and {@code max-ttl},
 * and a failure for {@code negative-ttl}: a name that does not resolve is asked once per
 * period, however many requests name it. Reactor Netty's default keeps an answer for as
 * long as its TTL says and a failure not at all. {@code /etc/hosts} is read first, as the
 * JDK and the system's resolver do; {@code servers} replace the system's resolvers
 * ({@code /etc/resolv.conf}), asked in order.
 * <p>
 * Both families are asked for, IPv4's first unless the JVM prefers IPv6 addresses
 * ({@code java.net.preferIPv6Addresses}), and only IPv4 when it runs an IPv4 stack only
 * ({@code java.net.preferIPv4Stack}): a name with both is raced over both
 * ({@code timeouts.happy-eyeballs}). Netty's default asks only for IPv4 on a host whose
 * interfaces have no IPv6 address but loopback's, and Reactor Netty's stops at the first
 * family's answer.
 */
public final class UpstreamResolver {

	private UpstreamResolver() {
	}

	/**
	 * Creates the resolver. It opens nothing until it is first asked; close it with the
	 * application.
	 * @param minTtl the shortest time an answer is kept, whole seconds
	 * @param maxTtl the longest time an answer is kept, whole seconds
	 * @param negativeTtl how long a failure is kept, whole seconds
	 * @param servers the DNS servers to ask, in order; empty for the system's
	 * @return the resolver group, shared by every upstream
	 */
	public static DnsAddressResolverGroup create(Duration minTtl, Duration maxTtl, Duration negativeTtl,
			List<InetSocketAddress> servers) {
		int min = Math.toIntExact(minTtl.getSeconds());
		int max = Math.toIntExact(maxTtl.getSeconds());
		int negative = Math.toIntExact(negativeTtl.getSeconds());
		NameResolverProvider.NameResolverSpec spec = NameResolverProvider.builder()
			.cacheMinTimeToLive(minTtl)
			.cacheMaxTimeToLive(maxTtl)
			.cacheNegativeTimeToLive(negativeTtl)
			.resolvedAddressTypes(addressTypes())
			// Both answers, not the first family's alone (Reactor Netty's default): the
			// race needs every address. The two questions are asked at once.
			.completeOncePreferredResolved(false)
			// One cache for the resolvers of every event loop: otherwise each loop asks
			// for itself, and a failure cached on one is asked again on the next.
			.resolveCache(new DefaultDnsCache(min, max, negative));
		if (!servers.isEmpty()) {
			List<InetSocketAddress> copy = List.copyOf(servers);
			spec.dnsAddressResolverGroupProvider((builder) -> new DnsAddressResolverGroup(builder.nameServerProvider(
					new SequentialDnsServerAddressStreamProvider(copy.toArray(new InetSocketAddress[0])))));
		}
		return spec.build().newNameResolverGroup(HttpResources.get(), LoopResources.DEFAULT_NATIVE);
	}

	private static ResolvedAddressTypes addressTypes() {
		if (NetUtil.isIpV4StackPreferred()) {
			return ResolvedAddressTypes.IPV4_ONLY;
		}
		return NetUtil.isIpV6AddressesPreferred() ? ResolvedAddressTypes.IPV6_PREFERRED
				: ResolvedAddressTypes.IPV4_PREFERRED;
	}

}
