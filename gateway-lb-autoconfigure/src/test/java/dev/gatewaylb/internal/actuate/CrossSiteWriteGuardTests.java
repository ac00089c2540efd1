package dev.gatewaylb.internal.actuate;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

class CrossSiteWriteGuardTests {

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
		assertThat(CrossSiteWriteGuard.refusal(headers) != null).isEqualTo(refused);
	}

}
