package dev.gatewaylb.autoconfigure;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

class WritableEndpointWarningTests {

	@ParameterizedTest(name = "access {0}, default access {1}, management port {2}, server port {3}: warn {4}")
	@CsvSource(nullValues = "-", textBlock = """
			-,            -,            -,    -,    false
			read-only,    -,            -,    -,    false
			none,         -,            -,    -,    false
			unrestricted, -,            -,    -,    true
			UNRESTRICTED, -,            -,    8080, true
			-,            unrestricted, -,    -,    true
			read-only,    unrestricted, -,    -,    false
			unrestricted, -,            8081, 8080, false
			unrestricted, -,            8080, 8080, true
			unrestricted, -,            8080, -,    true
			unrestricted, -,            0,    0,    false
			unrestricted, -,            -1,   -,    false
			""")
	void warnsWhenWritesAreOpenOnTheApplicationsPort(String access, String defaultAccess, String managementPort,
			String serverPort, boolean warns) {
		MockEnvironment environment = new MockEnvironment();
		set(environment, "management.endpoint.gatewaylb.access", access);
		set(environment, "management.endpoints.access.default", defaultAccess);
		set(environment, "management.server.port", managementPort);
		set(environment, "server.port", serverPort);
		assertThat(WritableEndpointWarning.writableOnApplicationPort(environment)).isEqualTo(warns);
	}

	private static void set(MockEnvironment environment, String key, String value) {
		if (value != null) {
			environment.setProperty(key, value);
		}
	}

}
