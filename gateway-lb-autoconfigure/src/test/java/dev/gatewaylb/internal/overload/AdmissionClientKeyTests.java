package dev.gatewaylb.internal.overload;

import java.net.InetAddress;

import dev.gatewaylb.request.Cidr;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key a client's waiters are counted by ({@code concurrency.max-wait-per-client}).
 */
class AdmissionClientKeyTests {

	@Test
	void anIpv4ClientIsItsAddressAndAnIpv6OneItsSlash64() {
		InetAddress v4 = address("192.0.2.7");
		assertThat(Admission.clientKey(v4)).isEqualTo(v4);
		assertThat(Admission.clientKey(address("2001:db8::1"))).as("one host may take any address of its /64")
			.isEqualTo(Admission.clientKey(address("2001:db8::ffff:1")))
			.isEqualTo(address("2001:db8::"));
		assertThat(Admission.clientKey(address("2001:db8:0:1::1"))).as("another /64")
			.isNotEqualTo(Admission.clientKey(address("2001:db8::1")));
		assertThat(Admission.clientKey(null)).isNull();
	}

	private static InetAddress address(String text) {
		InetAddress address = Cidr.parseAddress(text);
		assertThat(address).isNotNull();
		return address;
	}

}
