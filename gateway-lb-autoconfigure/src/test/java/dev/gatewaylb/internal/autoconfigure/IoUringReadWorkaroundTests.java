package dev.gatewaylb.internal.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

class IoUringReadWorkaroundTests {

	@Test
	void readsNettysVersionFromItsJars() {
		assertThat(HostVersions.nettyVersion(getClass().getClassLoader())).matches("4\\.\\d+\\.\\d+.*");
	}

	@ParameterizedTest(name = "io_uring={0} netty={1} property={2} -> {3}")
	@CsvSource(delimiter = '|', nullValues = "null", textBlock = """
			true  | 4.2.15.Final | null  | true
			true  | 4.2.16.Final | null  | true
			true  | 4.1.118.Final| null  | true
			true  | 4.2.17.Final | null  | false
			true  | 4.2.19.Final | null  | false
			true  | 4.3.0.Final  | null  | false
			true  | 5.0.0.Alpha1 | null  | false
			false | 4.2.15.Final | null  | false
			true  | 4.2.15.Final | true  | false
			true  | 4.2.15.Final | false | false
			true  | null         | null  | false
			true  | unknown      | null  | false
			""")
	void turnsOffMultishotPollOnlyOnNettyVersionsWithTheBugAndOnlyIfTheApplicationDidNotChoose(boolean ioUring,
			String version, String property, boolean expected) {
		assertThat(IoUringReadWorkaround.applies(ioUring, version, property)).isEqualTo(expected);
	}

}
