package dev.gatewaylb.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.gatewaylb.internal.request.Tokens;
import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * Traffic mirroring to a shadow service; a key that is not set is {@code null}.
 *
 * @param target Service id that receives a copy of the service's requests (a shadow): its
 * endpoints, pools and health are its own. The client never sees its answers. Empty turns
 * mirroring off.
 * @param percent Share of the requests mirrored, from 0 to 100, chosen by a stable hash
 * of the request id.
 * @param maxConcurrent Mirrored requests in flight at most; more are dropped, never
 * queued.
 * @param maxBody Largest request body copied for the shadow; a request with a larger
 * body, or one of unknown length, is not mirrored.
 * @param compare What of the shadow's answer is held against the primary's: none, status
 * (the status class) or body (the status class and a digest of the body).
 * @param methods HTTP methods mirrored. A list given replaces the default, GET and HEAD:
 * a mirrored POST reaches the shadow as well as the primary.
 * @param stripHeaders Request headers removed from the copy the shadow gets: the client's
 * credentials, by default, stay with the primary. A list given replaces the default
 * (Authorization, Cookie, Proxy-Authorization); an empty list keeps every header.
 */
public record MirrorProperties(@Nullable String target, @Nullable Integer percent, @Nullable Integer maxConcurrent,
		@Nullable DataSize maxBody, @Nullable MirrorCompare compare, @Nullable List<String> methods,
		@Nullable List<String> stripHeaders) {

	/**
	 * The largest body copied for the shadow: 1GB, a copy held in memory (an array, which
	 * cannot pass 2GB). The copies in flight together are bounded too, when the layers
	 * are merged: max-concurrent x max-body at most 1GB.
	 */
	static final DataSize MAX_BODY = DataSize.ofGigabytes(1);

	public MirrorProperties {
		if (percent != null && (percent < 0 || percent > 100)) {
			throw new IllegalArgumentException("percent: " + percent + " (expected: 0 to 100)");
		}
		Bounds.checkRange("max-concurrent", maxConcurrent, 1, Bounds.MAX_PER_ENDPOINT);
		if (maxBody != null && (maxBody.isNegative() || maxBody.compareTo(MAX_BODY) > 0)) {
			throw new IllegalArgumentException("max-body: " + maxBody + " (expected: 0B to 1GB, a copy in memory)");
		}
		if (methods != null) {
			List<String> upper = new ArrayList<>(methods.size());
			for (String method : methods) {
				if (method == null || !Tokens.isToken(method.trim())) {
					throw new IllegalArgumentException(
							"methods: " + method + " (expected: HTTP methods, e.g. GET, POST)");
				}
				upper.add(method.trim().toUpperCase(Locale.ROOT));
			}
			methods = List.copyOf(upper);
		}
		if (stripHeaders != null) {
			List<String> names = new ArrayList<>(stripHeaders.size());
			for (String name : stripHeaders) {
				if (name == null || !Tokens.isToken(name.trim())) {
					throw new IllegalArgumentException(
							"strip-headers: " + name + " (expected: header names, e.g. Authorization, Cookie)");
				}
				names.add(name.trim());
			}
			stripHeaders = List.copyOf(names);
		}
	}

}
