package dev.gatewaylb.internal.actuate;

import java.security.Principal;

import org.junit.jupiter.api.Test;
import org.springframework.security.authentication.AnonymousAuthenticationToken;

import org.springframework.boot.actuate.endpoint.SecurityContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Who is told what only signed-in readers are told (a split's override header, why the
 * last refresh was rejected): a reader with a principal that is not Spring Security's
 * anonymous token, nor a subclass of it.
 */
class ReaderAuthenticationTests {

	@Test
	void aSignedInReaderIsAuthenticated() {
		Principal alice = () -> "alice";
		assertThat(GatewayLbEndpoint.isAuthenticated(reader(alice))).isTrue();
	}

	@Test
	void noPrincipalAndTheAnonymousTokenAreNot() {
		assertThat(GatewayLbEndpoint.isAuthenticated(SecurityContext.NONE)).isFalse();
		assertThat(GatewayLbEndpoint.isAuthenticated(reader(new AnonymousAuthenticationToken()))).isFalse();
		assertThat(GatewayLbEndpoint.isAuthenticated(reader(new AnonymousAuthenticationToken() {
		}))).as("a subclass").isFalse();
	}

	private static SecurityContext reader(Principal principal) {
		return new SecurityContext() {

			@Override
			public Principal getPrincipal() {
				return principal;
			}

			@Override
			public boolean isUserInRole(String role) {
				return false;
			}

		};
	}

}
