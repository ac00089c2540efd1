package org.springframework.security.authentication;

import java.security.Principal;

/**
 * Stands in for Spring Security's anonymous token, which gateway-lb tells by its name
 * (Spring Security is not on this module's classpath): only its name and that it is a
 * principal matter to the test.
 */
public class AnonymousAuthenticationToken implements Principal {

	@Override
	public String getName() {
		return "anonymousUser";
	}

}
