package dev.gatewaylb.internal.actuate;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.reactive.handler.AbstractHandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebHandler;

/**
 * The live dashboard: a browser opening {@code /actuator/gatewaylb} gets a page that
 * polls the same address for JSON and draws it; every other client gets the JSON as
 * before.
 * <p>
 * A browser is told from a script by its {@code Accept} header naming {@code text/html}
 * explicitly: curl's {@code *}{@code /*} and a JSON client's {@code application/json} do
 * not, so they fall through to the actuator's own mapping. This mapping runs just before
 * the actuator's, so it sees every request of its context; what it does for one that is
 * not the dashboard's is one string comparison of the parsed path (the endpoint's own
 * path is looked up once). The page is one file shipped in the jar and read once: nothing
 * is loaded from the internet, and its Content-Security-Policy allows nothing but its own
 * script and style sheet, named by their SHA-256 (computed from the page when it is read,
 * so an edit of the page cannot leave a stale hash), and the endpoint's JSON: no inline
 * script or style attribute, no {@code eval}, and Trusted Types with no policy, so that
 * no string can ever reach an HTML or script sink. Whatever the JSON holds (a service id,
 * a rejected refresh's value, a peer's reason from the bus) is rendered as text.
 * {@code Referrer-Policy: no-referrer} and {@code Cache-Control: no-store} keep the
 * page's address and its data out of other sites and caches.
 */
public final class GatewayLbDashboard extends AbstractHandlerMapping {

	/**
	 * Just before the actuator's endpoint mapping (-100).
	 */
	static final int ORDER = -101;

	static final String PAGE = "META-INF/gateway-lb/dashboard.html";

	private final Supplier<@Nullable String> pathLookup;

	/**
	 * The endpoint's path, looked up once, at the first request: exposure and path
	 * mappings are fixed when the context starts, and the look-up (a bean and a string
	 * built) is not something every proxied request should pay. A benign race: two first
	 * requests may both look it up and store the same value.
	 */
	private volatile @Nullable String path;

	private volatile boolean pathResolved;

	private final byte[] page;

	private final String contentSecurityPolicy;

	private final WebHandler handler = this::send;

	/**
	 * Creates the mapping.
	 * @param path the endpoint's path within the application (base path and path mapping
	 * applied), or {@code null} while it is not exposed
	 */
	public GatewayLbDashboard(Supplier<@Nullable String> path) {
		this.pathLookup = path;
		this.page = read();
		this.contentSecurityPolicy = contentSecurityPolicy(new String(this.page, StandardCharsets.UTF_8));
		setOrder(ORDER);
	}

	@Override
	protected Mono<?> getHandlerInternal(ServerWebExchange exchange) {
		ServerHttpRequest request = exchange.getRequest();
		String path = path();
		if (path == null || !path.equals(request.getPath().pathWithinApplication().value())) {
			return Mono.empty();
		}
		HttpMethod method = request.getMethod();
		if ((method != HttpMethod.GET && method != HttpMethod.HEAD) || !wantsHtml(request.getHeaders())) {
			return Mono.empty();
		}
		return Mono.just(this.handler);
	}

	private @Nullable String path() {
		if (!this.pathResolved) {
			this.path = this.pathLookup.get();
			this.pathResolved = true;
		}
		return this.path;
	}

	/**
	 * Returns whether the request's {@code Accept} names {@code text/html} itself, with a
	 * quality above 0. A malformed header is no HTML: the actuator answers it as it
	 * would.
	 */
	static boolean wantsHtml(HttpHeaders headers) {
		List<String> accept = headers.get(HttpHeaders.ACCEPT);
		if (accept == null) {
			return false;
		}
		try {
			for (MediaType type : MediaType.parseMediaTypes(accept)) {
				if ("text".equalsIgnoreCase(type.getType()) && "html".equalsIgnoreCase(type.getSubtype())
						&& type.getQualityValue() > 0) {
					return true;
				}
			}
		}
		catch (InvalidMediaTypeException ex) {
			return false;
		}
		return false;
	}

	private Mono<Void> send(ServerWebExchange exchange) {
		ServerHttpResponse response = exchange.getResponse();
		HttpHeaders headers = response.getHeaders();
		headers.setContentType(new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8));
		headers.setContentLength(this.page.length);
		headers.setCacheControl("no-store");
		headers.set("Content-Security-Policy", this.contentSecurityPolicy);
		headers.set("X-Content-Type-Options", "nosniff");
		headers.set("Referrer-Policy", "no-referrer");
		headers.add(HttpHeaders.VARY, HttpHeaders.ACCEPT);
		if (exchange.getRequest().getMethod() == HttpMethod.HEAD) {
			return response.setComplete();
		}
		DataBuffer body = response.bufferFactory().wrap(this.page);
		return response.writeWith(Mono.just(body));
	}

	/**
	 * Returns the page's policy: its one inline script and its one style sheet by their
	 * hashes, nothing else inline.
	 * @param page the page
	 * @return the Content-Security-Policy
	 * @throws IllegalStateException when the page does not have exactly one of each
	 */
	static String contentSecurityPolicy(String page) {
		return "default-src 'none'; script-src " + hashOf(page, "script") + "; style-src " + hashOf(page, "style")
				+ "; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
				+ "frame-ancestors 'self'; require-trusted-types-for 'script'; trusted-types 'none'";
	}

	/**
	 * Returns the CSP source of the one element of a kind in the page:
	 * {@code 'sha256-<base64>'} of its text exactly as the page has it.
	 */
	private static String hashOf(String page, String tag) {
		String open = "<" + tag + ">";
		String close = "</" + tag + ">";
		int start = page.indexOf(open);
		int end = (start < 0) ? -1 : page.indexOf(close, start);
		if (start < 0 || end < 0 || page.indexOf(open, end) >= 0) {
			throw new IllegalStateException("gateway-lb's dashboard page must hold one " + open + " element");
		}
		String text = page.substring(start + open.length(), end);
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
			return "'sha256-" + Base64.getEncoder().encodeToString(digest) + "'";
		}
		catch (NoSuchAlgorithmException ex) {
			// Every JDK has SHA-256 (a required algorithm of the platform).
			throw new IllegalStateException(ex);
		}
	}

	private static byte[] read() {
		try (InputStream in = new ClassPathResource(PAGE, GatewayLbDashboard.class.getClassLoader()).getInputStream()) {
			return in.readAllBytes();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("gateway-lb's dashboard page " + PAGE + " is missing from the jar", ex);
		}
	}

}
