package dev.gatewaylb.internal.upstream;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The order a dial tries a name's addresses in, and what it hands to Reactor Netty.
 */
class DialTests {

	@Test
	void theFirstAddressSetsTheFamilyAndTheFamiliesAlternate() throws UnknownHostException {
		List<InetSocketAddress> answer = List.of(at("10.0.0.1"), at("10.0.0.2"), at("10.0.0.3"), at("fd00::1"),
				at("fd00::2"));
		assertThat(Dial.interleaved(answer)).containsExactly(at("10.0.0.1"), at("fd00::1"), at("10.0.0.2"),
				at("fd00::2"), at("10.0.0.3"));
		assertThat(Dial.interleaved(List.of(at("fd00::1"), at("10.0.0.1"), at("10.0.0.2"))))
			.containsExactly(at("fd00::1"), at("10.0.0.1"), at("10.0.0.2"));
	}

	@Test
	void oneFamilyKeepsTheResolversOrder() throws UnknownHostException {
		List<InetSocketAddress> answer = List.of(at("10.0.0.3"), at("10.0.0.1"), at("10.0.0.2"));
		assertThat(Dial.interleaved(answer)).isEqualTo(answer);
	}

	@Test
	void aRaceHandsReactorNettyItsFirstAddressAndOneStandingForTheWinner() throws UnknownHostException {
		Dial dial = new Dial("both:80", List.of(at("10.0.0.1"), at("fd00::1"), at("10.0.0.2")), 0, 250_000_000);
		List<InetSocketAddress> addresses = dial.addresses();
		assertThat(addresses).hasSize(2);
		assertThat(((Dial.DialAddress) addresses.get(0)).winner()).isFalse();
		assertThat(((Dial.DialAddress) addresses.get(0)).target()).isEqualTo(at("10.0.0.1"));
		assertThat(((Dial.DialAddress) addresses.get(1)).winner()).isTrue();
	}

	@Test
	void withoutTheRaceEveryAddressIsTriedInTurn() throws UnknownHostException {
		Dial dial = new Dial("both:80", List.of(at("10.0.0.1"), at("fd00::1")), 0, 0);
		assertThat(dial.races()).isFalse();
		assertThat(dial.addresses()).containsExactly(at("10.0.0.1"), at("fd00::1"))
			.allSatisfy((address) -> assertThat(((Dial.DialAddress) address).winner()).isFalse());
		assertThat(new Dial("one:80", List.of(at("10.0.0.1")), 0, 250_000_000).races()).isFalse();
	}

	private static InetSocketAddress at(String ip) throws UnknownHostException {
		return new InetSocketAddress(InetAddress.getByName(ip), 80);
	}

}
