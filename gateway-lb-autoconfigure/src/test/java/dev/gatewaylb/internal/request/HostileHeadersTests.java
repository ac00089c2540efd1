package dev.gatewaylb.internal.request;

import dev.gatewaylb.request.Cidr;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Feeds the parsers of client-controlled headers ({@code Cookie} through {@link Cookies},
 * {@code X-Forwarded-For} through {@link ClientAddresses} and {@link Cidr#parseAddress})
 * hostile input, and checks three things: they never throw, their answer is the one a
 * plain split-and-trim reference gives, and they run in time linear in the header's
 * length.
 * <p>
 * Time is counted, not timed: every header is a {@link CountingCharSequence}, and the
 * characters read must stay under a small constant per character of the header (plus, for
 * addresses, a fixed allowance for the one entry that ends the walk, whose fixed costs
 * its length does not pay for). The bound is deterministic, so it fails the same way on a
 * loaded CI machine as on a laptop. It catches the quadratic case it was written for:
 * with the former unbounded search for {@code =} (past the current pair's {@code ;}), 8
 * KB of {@code ;} took 33,566,720 reads, about 4,100 per character.
 * <p>
 * The random inputs come from fixed seeds, so a failure reproduces.
 */
class HostileHeadersTests {

	/**
	 * The most characters {@link Cookies} may read per character of the header: the scan
	 * of each pair for its {@code ;} and {@code =}, then trims and a name match within
	 * that pair only (2 measured).
	 */
	static final int COOKIE_READS_PER_CHAR = 3;

	/**
	 * The most characters the X-Forwarded-For walk and the address parser may read per
	 * character: the backward scan for the comma, the trims, the bracket, colon and port
	 * searches, the address itself (4.2 measured over trusted hops).
	 */
	static final int ADDRESS_READS_PER_CHAR = 6;

	/**
	 * The fixed reads of one entry, paid once by the entry that ends the walk: a
	 * one-character {@code 1} costs 10 reads.
	 */
	static final int ADDRESS_READS_FIXED = 32;

	private static final int EIGHT_KB = 8 * 1024;

	private static final String NAME = "GWLB";

	private static final List<Cidr> TRUSTED = List.of(Cidr.valueOf("10.0.0.0/8"), Cidr.valueOf("2001:db8::/32"));

	private static final InetSocketAddress PEER = new InetSocketAddress(Cidr.parseAddress("10.9.9.9"), 40000);

	static Stream<Arguments> adversarialCookieLines() {
		return Stream.of(Arguments.of("8 KB of ;", repeat(";")), Arguments.of("a; with no =", repeat("a;")),
				Arguments.of("8 KB of ; then =", repeat(";").substring(1) + "="),
				Arguments.of("8 KB of =", repeat("=")), Arguments.of("a=a=a=...", repeat("a=")),
				Arguments.of("8 KB of blanks", repeat(" \t")), Arguments.of("blank pairs", repeat(" ;")),
				Arguments.of("blank names", repeat(" \t=;")), Arguments.of("the name without =", repeat(NAME + ";")),
				Arguments.of("longer names", repeat(NAME + "X=1;")), Arguments.of("blanked names", repeat(" GWLX =;")),
				Arguments.of("quotes", repeat("\"")), Arguments.of("quoted values", repeat("a=\"\";")));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("adversarialCookieLines")
	void readsAnAdversarialCookieLineInLinearTime(String description, String line) {
		List<CountingCharSequence> lines = CountingCharSequence.of(List.of(line));
		String value = Cookies.first(lines, NAME);
		assertThat(value).isEqualTo(referenceCookie(List.of(line)));
		assertReads(lines, COOKIE_READS_PER_CHAR, 0);
	}

	@Test
	void readsRandomCookieLinesLikeTheReferenceInLinearTime() {
		SplittableRandom random = new SplittableRandom(6265);
		String[] pieces = { ";", ";", "=", " ", "\t", "\"", "a", "b=c", NAME, NAME + "=", "; " + NAME + " = \"",
				"\u00e9", "\ud83d\ude00", "\ud800", "\u0000", "\r\n" };
		for (int i = 0; i < 2_000; i++) {
			List<String> header = randomLines(random, pieces);
			List<CountingCharSequence> lines = CountingCharSequence.of(header);
			String value = Cookies.first(lines, NAME);
			assertThat(value).as("%s", header).isEqualTo(referenceCookie(header));
			if (value != null) {
				assertThat(header).as("the value is part of a line").anyMatch((line) -> line.contains(value));
			}
			assertReads(lines, COOKIE_READS_PER_CHAR, 0);
		}
	}

	static Stream<Arguments> adversarialForwardedFor() {
		return Stream.of(Arguments.of("trusted hops", List.of(repeat("10.0.0.1,"))),
				Arguments.of("trusted hops and blanks", List.of(repeat(" 10.0.0.1 ,\t"))),
				Arguments.of("trusted hops with ports", List.of(repeat("10.0.0.1:65535,"))),
				Arguments.of("trusted mapped IPv6 with ports", List.of(repeat("[::ffff:10.0.0.1]:443,"))),
				Arguments.of("trusted IPv6", List.of(repeat("2001:db8::1, "))),
				Arguments.of("trusted IPv6 in full", List.of(repeat("[2001:db8:0:0:0:0:0:1], "))),
				Arguments.of("trusted IPv6 with an IPv4 tail", List.of(repeat("2001:db8::10.0.0.1,"))),
				Arguments.of("garbage behind trusted hops", List.of("x" + repeat(", 10.0.0.1"))),
				Arguments.of("8 KB of ,", List.of(repeat(","))), Arguments.of("8 KB of :", List.of(repeat(":"))),
				Arguments.of("8 KB of [", List.of(repeat("["))), Arguments.of("8 KB of ]", List.of(repeat("]"))),
				Arguments.of("[]:", List.of(repeat("[]:"))), Arguments.of("8 KB of 1", List.of(repeat("1"))),
				Arguments.of("1.1.1.1...", List.of(repeat("1."))), Arguments.of("1:1:1:...", List.of(repeat("1:"))),
				Arguments.of("::::", List.of(repeat("::"))), Arguments.of("8 KB of f", List.of(repeat("f"))),
				Arguments.of("8 KB of .", List.of(repeat("."))), Arguments.of("8 KB of blanks", List.of(repeat(" \t"))),
				Arguments.of("a long bracket", List.of("[" + repeat("1:") + "]:443")),
				Arguments.of("2,000 header lines of trusted hops", Collections.nCopies(2_000, "10.0.0.1")),
				Arguments.of("2,000 empty header lines", Collections.nCopies(2_000, "")));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("adversarialForwardedFor")
	void walksAnAdversarialForwardedForInLinearTime(String description, List<String> header) {
		List<CountingCharSequence> lines = CountingCharSequence.of(header);
		String client = ClientAddresses.resolve(PEER, lines, TRUSTED);
		assertThat(client).isEqualTo(referenceClient(header));
		assertReads(lines, ADDRESS_READS_PER_CHAR, ADDRESS_READS_FIXED);
	}

	@Test
	void walksRandomForwardedForLikeTheReferenceInLinearTime() {
		SplittableRandom random = new SplittableRandom(7239);
		String[] pieces = { ",", ", ", " ", "\t", "10.0.0.1", "10.255.0.9:8080", "198.51.100.1", "2001:db8::7",
				"[2001:db8::8]:443", "[::ffff:10.1.2.3]", "::", ":", "[", "]", ".", "1", "0", "ff", "%eth0", "443",
				"65536", "256", "example.com", "\u00e9", "\ud800", "\u0000" };
		for (int i = 0; i < 2_000; i++) {
			List<String> header = randomLines(random, pieces);
			List<CountingCharSequence> lines = CountingCharSequence.of(header);
			String client = ClientAddresses.resolve(PEER, lines, TRUSTED);
			assertThat(client).as("%s", header).isEqualTo(referenceClient(header));
			assertThat(client).as("%s", header)
				.satisfiesAnyOf((c) -> assertThat(c).isEqualTo(PEER.getAddress().getHostAddress()),
						(c) -> assertThat(entriesAsAddresses(header)).contains(c));
			assertReads(lines, ADDRESS_READS_PER_CHAR, ADDRESS_READS_FIXED);
		}
	}

	@Test
	void parsesRandomTextToAnAddressThatSpellsItselfOrToNull() {
		SplittableRandom random = new SplittableRandom(4291);
		String[] pieces = { "1", "0", "255", "256", "01", "a", "F", "ffff", "g", ".", ":", "::", "[", "]", " ", "%",
				"/", "+", "-", "\u0661", "\uff11" };
		for (int i = 0; i < 20_000; i++) {
			StringBuilder text = new StringBuilder();
			int count = random.nextInt(12);
			for (int p = 0; p < count; p++) {
				text.append(pieces[random.nextInt(pieces.length)]);
			}
			CountingCharSequence counting = new CountingCharSequence(text.toString());
			InetAddress address = Cidr.parseAddress(counting, 0, counting.length());
			assertReads(List.of(counting), ADDRESS_READS_PER_CHAR, ADDRESS_READS_FIXED);
			if (address != null) {
				assertThat(text.toString().trim()).as("only digits, dots, colons and brackets")
					.matches("\\[?[0-9A-Fa-f:.]+]?");
				assertThat(Cidr.parseAddress(address.getHostAddress())).as("%s", text).isEqualTo(address);
			}
		}
	}

	private static void assertReads(List<CountingCharSequence> lines, int perChar, int fixed) {
		long length = CountingCharSequence.length(lines);
		assertThat(CountingCharSequence.reads(lines)).as("characters read for %d characters of header", length)
			.isLessThanOrEqualTo(perChar * length + fixed);
	}

	/**
	 * Returns {@code piece} repeated to 8 KB.
	 */
	private static String repeat(String piece) {
		return piece.repeat((EIGHT_KB + piece.length() - 1) / piece.length());
	}

	/**
	 * Returns one to three header lines of random pieces, one time in four 8 KB long.
	 */
	private static List<String> randomLines(SplittableRandom random, String[] pieces) {
		List<String> lines = new ArrayList<>();
		int count = 1 + random.nextInt(3);
		for (int l = 0; l < count; l++) {
			int length = (random.nextInt(4) == 0) ? EIGHT_KB : random.nextInt(256);
			StringBuilder line = new StringBuilder();
			while (line.length() < length) {
				if (random.nextInt(10) == 0) {
					line.append((char) random.nextInt(0x10000));
				}
				else {
					line.append(pieces[random.nextInt(pieces.length)]);
				}
			}
			lines.add(line.toString());
		}
		return lines;
	}

	/**
	 * The documented cookie semantics, written the obvious way: split on {@code ;}, the
	 * first pair with an {@code =} whose trimmed name matches, its value trimmed and
	 * unquoted.
	 */
	private static @Nullable String referenceCookie(List<String> lines) {
		for (String line : lines) {
			for (String pair : line.split(";", -1)) {
				int equals = pair.indexOf('=');
				if (equals >= 0 && stripBlanks(pair.substring(0, equals)).equals(NAME)) {
					String value = stripBlanks(pair.substring(equals + 1));
					return (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\""))
							? value.substring(1, value.length() - 1) : value;
				}
			}
		}
		return null;
	}

	private static String stripBlanks(String text) {
		int start = 0;
		int end = text.length();
		while (start < end && (text.charAt(start) == ' ' || text.charAt(start) == '\t')) {
			start++;
		}
		while (end > start && (text.charAt(end - 1) == ' ' || text.charAt(end - 1) == '\t')) {
			end--;
		}
		return text.substring(start, end);
	}

	private static final Pattern BRACKETED = Pattern.compile("(\\[[^\\]]*\\])(?::([0-9]{1,5}))?");

	private static final Pattern WITH_PORT = Pattern.compile("([^:]*):([0-9]{1,5})");

	/**
	 * The documented walk, written the obvious way: split on {@code ,}, skip empty
	 * entries, strip a port with a regular expression.
	 */
	private static String referenceClient(List<String> header) {
		List<String> entries = entries(header);
		InetAddress hop = PEER.getAddress();
		for (int i = entries.size() - 1; i >= 0; i--) {
			if (!trusted(hop)) {
				break;
			}
			InetAddress next = referenceEntry(entries.get(i));
			if (next == null) {
				break;
			}
			hop = next;
		}
		return hop.getHostAddress();
	}

	private static boolean trusted(InetAddress address) {
		return TRUSTED.stream().anyMatch((network) -> network.contains(address));
	}

	private static @Nullable InetAddress referenceEntry(String entry) {
		Matcher bracketed = BRACKETED.matcher(entry);
		if (bracketed.matches()) {
			return isPort(bracketed.group(2)) ? Cidr.parseAddress(bracketed.group(1)) : null;
		}
		if (entry.startsWith("[")) {
			return null;
		}
		Matcher withPort = WITH_PORT.matcher(entry);
		if (withPort.matches()) {
			return isPort(withPort.group(2)) ? Cidr.parseAddress(withPort.group(1)) : null;
		}
		return (entry.indexOf(':') == entry.lastIndexOf(':') && entry.indexOf(':') >= 0) ? null
				: Cidr.parseAddress(entry);
	}

	private static boolean isPort(@Nullable String digits) {
		return digits == null || Integer.parseInt(digits) <= 65535;
	}

	private static List<String> entries(List<String> header) {
		List<String> entries = new ArrayList<>();
		for (String line : header) {
			for (String entry : line.split(",", -1)) {
				if (!entry.trim().isEmpty()) {
					entries.add(entry.trim());
				}
			}
		}
		return entries;
	}

	private static List<String> entriesAsAddresses(List<String> header) {
		List<String> addresses = new ArrayList<>();
		for (String entry : entries(header)) {
			InetAddress address = referenceEntry(entry);
			if (address != null) {
				addresses.add(address.getHostAddress());
			}
		}
		return addresses;
	}

}
