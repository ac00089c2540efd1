package dev.gatewaylb.internal.upstream;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import dev.gatewaylb.internal.balance.Endpoint;
import io.netty.channel.Channel;
import io.netty.util.NetUtil;
import org.jspecify.annotations.Nullable;

/**
 * What one service's endpoints resolved to and where their open connections go, for the
 * actuator: an endpoint is one pool ({@code host:port}) whatever addresses its name has,
 * and each connection keeps the address its dial reached.
 * <p>
 * Written when a name is resolved and when a connection opens or closes, never per
 * request, from any event loop: concurrent maps, each entry written whole.
 */
public final class EndpointAddresses {

	private final Map<String, List<String>> resolved = new ConcurrentHashMap<>();

	private final Map<Channel, String> connections = new ConcurrentHashMap<>();

	static String key(String host, int port) {
		return Endpoint.address(host, port);
	}

	void resolved(String endpoint, List<InetSocketAddress> addresses) {
		List<String> named = new ArrayList<>(addresses.size());
		for (InetSocketAddress address : addresses) {
			named.add(NetUtil.toAddressString(address.getAddress()));
		}
		this.resolved.put(endpoint, List.copyOf(named));
	}

	void opened(String endpoint, Channel channel) {
		this.connections.put(channel, endpoint);
		channel.closeFuture().addListener((closed) -> this.connections.remove(channel));
	}

	/**
	 * Returns the addresses an endpoint's name resolved to last.
	 * @param endpoint the endpoint's {@code host:port}
	 * @return the addresses, or {@code null} for an IP literal or a name not resolved yet
	 */
	public @Nullable List<String> resolvedAddresses(String endpoint) {
		return this.resolved.get(endpoint);
	}

	/**
	 * Returns the open connections of an endpoint by the address each is connected to.
	 * @param endpoint the endpoint's {@code host:port}
	 * @return the count of connections by remote {@code address:port}, sorted
	 */
	public Map<String, Integer> connections(String endpoint) {
		Map<String, Integer> counts = new TreeMap<>();
		this.connections.forEach((channel, owner) -> {
			SocketAddress remote = channel.remoteAddress();
			if (owner.equals(endpoint) && remote instanceof InetSocketAddress inet && inet.getAddress() != null) {
				counts.merge(NetUtil.toSocketAddressString(inet), 1, Integer::sum);
			}
		});
		return counts;
	}

	/**
	 * Forgets an endpoint that left the service.
	 * @param endpoint the endpoint's {@code host:port}
	 */
	void forget(String endpoint) {
		this.resolved.remove(endpoint);
	}

}
