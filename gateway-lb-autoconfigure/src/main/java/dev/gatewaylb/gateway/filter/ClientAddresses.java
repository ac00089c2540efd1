package dev.gatewaylb.gateway.filter;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;

import dev.gatewaylb.config.Cidr;
import org.jspecify.annotations.Nullable;

/**
 * Finds the client's address behind trusted proxies.
 * <p>
 * Starting from the connection's peer, while the current hop is a trusted proxy, the next
 * address to the left in {@code X-Forwarded-For} becomes the current hop; the first hop
 * that is not trusted is the client. A peer outside {@code trusted-proxies} is the client
 * whatever the header says, so a client cannot choose its own hash key by sending the
 * header. An entry that is not an IP literal ends the walk at the last trusted hop. This
 * is nginx's {@code real_ip_recursive on}.
 */
final class ClientAddresses {

	private ClientAddresses() {
	}

	/**
	 * Returns the client's IP address as text.
	 * @param peer the connection's peer, or {@code null}
	 * @param forwardedFor the values of every {@code X-Forwarded-For} header, or
	 * {@code null}
	 * @param trustedProxies the networks whose header is believed
	 * @return the address, or {@code null} when the peer is unknown
	 */
	static @Nullable String resolve(@Nullable InetSocketAddress peer, @Nullable List<String> forwardedFor,
			List<Cidr> trustedProxies) {
		InetAddress hop = (peer != null) ? peer.getAddress() : null;
		if (hop == null) {
			return null;
		}
		if (trustedProxies.isEmpty() || forwardedFor == null || forwardedFor.isEmpty()) {
			return hop.getHostAddress();
		}
		for (int line = forwardedFor.size() - 1; line >= 0; line--) {
			String[] entries = forwardedFor.get(line).split(",");
			for (int i = entries.length - 1; i >= 0; i--) {
				if (!trusted(hop, trustedProxies)) {
					return hop.getHostAddress();
				}
				InetAddress next = Cidr.parseAddress(entries[i]);
				if (next == null) {
					return hop.getHostAddress();
				}
				hop = next;
			}
		}
		return hop.getHostAddress();
	}

	static boolean trusted(InetAddress address, List<Cidr> trustedProxies) {
		for (Cidr network : trustedProxies) {
			if (network.contains(address)) {
				return true;
			}
		}
		return false;
	}

}
