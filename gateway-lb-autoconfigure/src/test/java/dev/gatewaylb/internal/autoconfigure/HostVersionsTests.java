package dev.gatewaylb.internal.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class HostVersionsTests {

	@Test
	void readsReactorNettysVersionFromItsJarAndTheBuildsIsOneWithoutTheKeepAliveStall() {
		String version = HostVersions.reactorNettyVersion(getClass().getClassLoader());
		assertThat(version).matches("1\\.\\d+\\.\\d+.*");
		assertThat(HostVersions.stallsKeepAlive(version)).as(version).isFalse();
	}

	@ParameterizedTest(name = "reactor-netty {0} -> {1}")
	@CsvSource(delimiter = '|', nullValues = "null", textBlock = """
			1.3.6          | true
			1.3.7          | true
			1.2.18         | true
			1.3.8          | false
			1.3.10         | false
			1.4.0-M1       | false
			2.0.0          | false
			1.3.6.RELEASE  | true
			null           | false
			unknown        | false
			""")
	void warnsOfTheKeepAliveStallOnlyOnVersionsBeforeItsFix(String version, boolean expected) {
		assertThat(HostVersions.stallsKeepAlive(version)).isEqualTo(expected);
	}

}
