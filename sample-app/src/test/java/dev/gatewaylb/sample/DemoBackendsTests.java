package dev.gatewaylb.sample;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DemoBackends}' reading of the {@code delay} query parameter.
 */
class DemoBackendsTests {

	@ParameterizedTest(name = "{0} -> {1} ms")
	@CsvSource(delimiter = '|', textBlock = """
			/                      | 0
			/?delay=250            | 250
			/a/b?x=1&delay=42      | 42
			/?delay=%2042          | 42
			/?delay=10000          | 10000
			/?delay=60000          | 10000
			/?delay=-5             | 0
			/?delay=               | 0
			/?delay=abc            | 0
			/?delay=1.5            | 0
			/?delay=%zz            | 0
			/?delay=99999999999999999999 | 0
			""")
	void readsDelayClampedToTenSecondsAndIgnoresInvalidValues(String uri, long millis) {
		assertThat(DemoBackends.delay(uri)).isEqualTo(Duration.ofMillis(millis));
	}

	@ParameterizedTest(name = "{0} at {1} -> {2} ms")
	@CsvSource(delimiter = '|', textBlock = """
			/?delay=250                   | alpha | 250
			/?delay=250&slow=alpha        | alpha | 250
			/?delay=250&slow=alpha        | beta  | 0
			/?slow=gamma&delay=80         | gamma | 80
			/?slow=gamma&slow=beta&delay=80 | beta | 80
			/?slow=gamma&delay=80         | alpha | 0
			/?slow=%zz&delay=80           | alpha | 0
			""")
	void slowsOnlyTheBackendThatSlowNames(String uri, String backend, long millis) {
		assertThat(DemoBackends.delay(backend, uri)).isEqualTo(Duration.ofMillis(millis));
	}

	@ParameterizedTest(name = "{0} at {1} -> fails {2}")
	@CsvSource(delimiter = '|', textBlock = """
			/                          | gamma | false
			/?fail=gamma               | gamma | true
			/?fail=gamma               | alpha | false
			/?fail=beta&fail=gamma     | beta  | true
			/?fail=%zz                 | gamma | false
			""")
	void failsOnlyTheBackendThatFailNames(String uri, String backend, boolean fails) {
		assertThat(DemoBackends.fails(backend, uri)).isEqualTo(fails);
	}

	@ParameterizedTest(name = "{0} at {1} -> {2}")
	@CsvSource(delimiter = '|', textBlock = """
			/legacy/orders         | gamma | 404
			/legacy                | gamma | 404
			/legacy?x=1            | gamma | 404
			/legacy/orders         | alpha | 200
			/legacyish             | gamma | 200
			/legacy/x?fail=gamma   | gamma | 500
			""")
	void gammaNoLongerServesLegacy(String uri, String backend, int status) {
		assertThat(DemoBackends.status(backend, uri)).isEqualTo(status);
	}

}
