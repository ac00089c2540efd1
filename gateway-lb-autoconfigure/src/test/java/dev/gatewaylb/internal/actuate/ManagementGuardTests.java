package dev.gatewaylb.internal.actuate;

import java.util.List;

import dev.gatewaylb.config.ActuatorProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.PathContainer;

import static org.assertj.core.api.Assertions.assertThat;

class ManagementGuardTests {

	@ParameterizedTest(name = "Sec-Fetch-Site {0}, Origin {1}, Host {2}: refused {3}")
	@CsvSource(nullValues = "-", textBlock = """
			-,           -,                        gw:8080,     false
			same-origin, -,                        gw:8080,     false
			none,        -,                        gw:8080,     false
			SAME-ORIGIN, http://gw:8080,           gw:8080,     false
			-,           http://GW:8080,           gw:8080,     false
			-,           http://gw,                gw:80,       false
			-,           https://gw:443,           gw,          false
			-,           http://[::1]:8080,        [::1]:8080,  false
			cross-site,  -,                        gw:8080,     true
			same-site,   -,                        gw:8080,     true
			-,           http://evil.example,      gw:8080,     true
			-,           http://gw:8081,           gw:8080,     true
			-,           null,                     gw:8080,     true
			-,           http://gw:8080,           -,           true
			-,           ht tp://gw,               gw,          true
			-,           http://gw.evil.example,   gw,          true
			""")
	void refusesWritesFromAnotherSiteOrOrigin(String site, String origin, String host, boolean refused) {
		HttpHeaders headers = new HttpHeaders();
		if (site != null) {
			headers.set("Sec-Fetch-Site", site);
		}
		if (origin != null) {
			headers.set(HttpHeaders.ORIGIN, origin);
		}
		if (host != null) {
			headers.set(HttpHeaders.HOST, host);
		}
		assertThat(ManagementGuard.refusal(headers) != null).isEqualTo(refused);
	}

	@ParameterizedTest(name = "Host {0}: allowed {1}")
	@CsvSource(nullValues = "-", textBlock = """
			-,                          true
			127.0.0.1,                  true
			127.0.0.1:8081,             true
			10.1.2.3:80,                true
			[::1]:8081,                 true
			[fe80::1],                  true
			localhost:8081,             true
			LocalHost.,                 true
			dash.localhost:8081,        true
			gw.internal.example:8081,   true
			GW.INTERNAL.EXAMPLE,        true
			a.b.ops.example,            true
			x.attacker.example:8081,    false
			internal.example,           false
			ops.example,                false
			evilops.example,            false
			localhost.attacker.example, false
			127.0.0.1.attacker.example, false
			gw.internal.example:80:80,  false
			gw.internal.example:x,      false
			[::1,                       false
			[::1]x,                     false
			'',                         false
			:8081,                      false
			""")
	void answersLoopbackNamesIpLiteralsAndTheAllowedHostsOnly(String host, boolean allowed) {
		List<String> names = new ActuatorProperties(List.of("gw.internal.example", "*.ops.example")).allowedHosts();
		assertThat(ManagementGuard.hostAllowed(host, names)).isEqualTo(allowed);
	}

	@ParameterizedTest(name = "{0} under /actuator: {1}")
	@CsvSource(textBlock = """
			/actuator,                        true
			/actuator/gatewaylb/api,          true
			/actuator/gatewaylb;x=1/api,      true
			/actuator;x=1/gatewaylb,          true
			/%61ctuator/%67atewaylb/api,      true
			//actuator//gatewaylb,            true
			/actuatorx/gatewaylb,             false
			/api/actuator,                    false
			/,                                false
			/shop/items,                      false
			""")
	void seesThePathAsSpringsHandlerMappingsDo(String path, boolean under) {
		assertThat(ManagementGuard.startsWith(PathContainer.parsePath(path), ManagementGuard.segments("/actuator")))
			.isEqualTo(under);
	}

	@Test
	void everyPathIsUnderARootBasePath() {
		assertThat(ManagementGuard.startsWith(PathContainer.parsePath("/gatewaylb"), ManagementGuard.segments("")))
			.isTrue();
	}

	@ParameterizedTest(name = "allowed-hosts {0} is refused")
	@CsvSource(textBlock = """
			http://gw.example
			gw.example:8081
			*
			*.
			-gw.example
			gw..example
			gw example
			""")
	void refusesAnAllowedHostThatIsNotAName(String entry) {
		org.assertj.core.api.Assertions.assertThatIllegalArgumentException()
			.isThrownBy(() -> new ActuatorProperties(List.of(entry)))
			.withMessage("allowed-hosts[0]: '" + entry
					+ "' (expected: a host name, or *.domain for the names under it, without scheme or port)");
	}

}
