package dev.gatewaylb.internal.affinity;

import java.time.Instant;
import java.util.List;

import dev.gatewaylb.internal.affinity.core.EndpointCookie;
import dev.gatewaylb.internal.balance.EndpointState;
import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.config.CookieSettings;
import dev.gatewaylb.internal.request.Cookies;
import dev.gatewaylb.internal.request.SetCookies;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpResponse;

/**
 * One exchange's endpoint affinity: the first pick follows the request's cookie
 * ({@link #follow}), and the exchange's answer counts what became of it and sets the
 * cookie ({@link #answered}), once. A service without affinity shares {@link #NONE},
 * which does nothing, so that the exchange asks no question before it calls.
 * <p>
 * Not thread-safe: an exchange calls it one step at a time.
 */
public class AffinitySession {

	/**
	 * The session of every exchange of a service without endpoint affinity.
	 */
	public static final AffinitySession NONE = new AffinitySession();

	private AffinitySession() {
	}

	/**
	 * Returns the session of an exchange of a service.
	 * @param state the service's affinity
	 * @return a new session, or {@link #NONE} when the service has no affinity
	 */
	public static AffinitySession of(AffinityState state) {
		EndpointCookie signer = state.signer();
		return (signer != null) ? new Followed(state, signer) : NONE;
	}

	/**
	 * Follows the request's cookie, at the exchange's first pick (and again after a wait
	 * for a place, {@link #again()}): the index of the endpoint a valid cookie names if
	 * the session may stay there ({@link Snapshot#follow}), else -1 for the service's
	 * algorithm to pick. A cookie this service did not sign (tampered with, of another
	 * service, of a secret no longer accepted) is ignored, never an error.
	 * @param cookies the request's {@code Cookie} lines, or {@code null}
	 * @param snapshot the service's endpoints
	 * @return the index, or -1
	 */
	public int follow(@Nullable List<String> cookies, Snapshot<?> snapshot) {
		return -1;
	}

	/**
	 * Makes the next pick follow the cookie again: after a wait for a place, the endpoint
	 * the cookie names may be the one with a place now.
	 */
	public void again() {
	}

	/**
	 * Counts what became of the request's affinity, once, when the exchange's answer is
	 * decided, and sets the cookie on an upstream's answer: a session that arrived
	 * without a valid cookie, or whose endpoint could not take it, or that a retry or a
	 * backup moved, gets one naming the endpoint that answered. With {@code learn}, only
	 * an answer that sets the application's cookie sets it, and one that expires the
	 * application's cookie expires it.
	 * @param response the exchange's response, left alone once committed
	 * @param cookies the request's {@code Cookie} lines, or {@code null}
	 * @param answered the endpoint whose answer the client gets, or {@code null} when the
	 * gateway answers
	 * @param lastTried the address of the endpoint the exchange tried last, or
	 * {@code null}
	 * @param secure whether the client came over HTTPS (the cookie is then
	 * {@code Secure})
	 * @param nowMillis the wall clock, for the application cookie's {@code Expires}
	 */
	public void answered(ServerHttpResponse response, @Nullable List<String> cookies, @Nullable EndpointState answered,
			@Nullable String lastTried, boolean secure, long nowMillis) {
	}

	/**
	 * The session of an exchange of a service with endpoint affinity.
	 */
	private static final class Followed extends AffinitySession {

		private final AffinityState state;

		private final EndpointCookie signer;

		/**
		 * What became of the request's affinity: decided at the first pick, {@code null}
		 * until then.
		 */
		private @Nullable AffinityOutcome outcome;

		/**
		 * The endpoint the cookie led the first pick to, if it did.
		 */
		private @Nullable EndpointState followed;

		/**
		 * Whether the request's cookie gets a fresh value with the answer: it was signed
		 * with a previous secret (sessions leave the old secret as they go), or it is
		 * past half its lifetime.
		 */
		private boolean renew;

		private boolean counted;

		Followed(AffinityState state, EndpointCookie signer) {
			this.state = state;
			this.signer = signer;
		}

		@Override
		public int follow(@Nullable List<String> cookies, Snapshot<?> snapshot) {
			if (this.outcome != null) {
				return -1;
			}
			// The value is checked where it lies in the Cookie line: no copy of it.
			String name = this.state.settings().cookie().name();
			for (int i = 0; cookies != null && i < cookies.size(); i++) {
				String line = cookies.get(i);
				long bounds = Cookies.bounds(line, name);
				if (bounds == Cookies.ABSENT) {
					continue;
				}
				int start = Cookies.start(bounds);
				int end = Cookies.end(bounds);
				if (start == end) {
					break;
				}
				int secret = this.signer.check(line, start, end);
				if (secret == EndpointCookie.REJECTED) {
					this.outcome = AffinityOutcome.REJECTED;
					return -1;
				}
				if (secret == EndpointCookie.EXPIRED) {
					this.outcome = AffinityOutcome.EXPIRED;
					return -1;
				}
				// A session past half its cookie's lifetime gets a fresh value with its
				// answer: a session in use never expires, a copy left alone does.
				this.renew = secret > 0 || this.signer.checkedAgeSeconds() > this.signer.lifetimeSeconds() / 2;
				int index = snapshot.follow(this.signer.checkedEndpointId());
				if (index < 0 || !snapshot.underLoadBound(index, this.state.settings().maxLoadFactor())) {
					// Gone, not followable, or holding more than its share: a cookie
					// copied
					// to many clients cannot pile them onto one endpoint.
					this.outcome = AffinityOutcome.MOVED;
					return -1;
				}
				this.outcome = AffinityOutcome.FOLLOWED;
				this.followed = snapshot.state(index);
				return index;
			}
			this.outcome = AffinityOutcome.NEW;
			return -1;
		}

		@Override
		public void again() {
			this.outcome = null;
			this.followed = null;
			this.renew = false;
		}

		@Override
		public void answered(ServerHttpResponse response, @Nullable List<String> cookies,
				@Nullable EndpointState answered, @Nullable String lastTried, boolean secure, long nowMillis) {
			AffinityOutcome outcome = this.outcome;
			if (outcome == null || this.counted) {
				return;
			}
			this.counted = true;
			EndpointState followed = this.followed;
			if (answered != null) {
				if (outcome == AffinityOutcome.FOLLOWED && answered != followed) {
					outcome = AffinityOutcome.MOVED;
				}
				setCookie(response, cookies, answered, outcome, secure, nowMillis);
				if (outcome == AffinityOutcome.FOLLOWED) {
					this.state.followed(answered);
				}
			}
			else if (outcome == AffinityOutcome.FOLLOWED && followed != null && !followed.address().equals(lastTried)) {
				// The gateway answered, after a retry left the session's endpoint.
				outcome = AffinityOutcome.MOVED;
			}
			this.state.outcome(outcome).increment();
		}

		private void setCookie(ServerHttpResponse response, @Nullable List<String> cookies, EndpointState answered,
				AffinityOutcome outcome, boolean secure, long nowMillis) {
			if (response.isCommitted()) {
				return;
			}
			AffinitySettings settings = this.state.settings();
			CookieSettings attributes = settings.cookie();
			String learn = settings.learn();
			if (learn != null) {
				SetCookies.Change change = SetCookies.of(response.getHeaders().get(HttpHeaders.SET_COOKIE), learn,
						Instant.ofEpochMilli(nowMillis));
				if (change == SetCookies.Change.EXPIRED) {
					if (outcome != AffinityOutcome.NEW) {
						response.addCookie(attributes.toExpiredCookie());
					}
					return;
				}
				// A session is one the answer starts, or one the request carries: a
				// session
				// kept in a store the endpoints share still needs its new endpoint named
				// when it moved, and its cookie signed with the current secret.
				boolean session = change == SetCookies.Change.SET || carries(cookies, learn);
				if (!session
						|| (change != SetCookies.Change.SET && outcome == AffinityOutcome.FOLLOWED && !this.renew)) {
					return;
				}
			}
			else if (outcome == AffinityOutcome.FOLLOWED && !this.renew) {
				return;
			}
			String value = this.signer.sign(EndpointCookie.endpointId(answered.address()));
			response.addCookie(attributes.toResponseCookie(value, secure));
		}

		/**
		 * Returns whether the request carries a cookie of that name.
		 */
		private static boolean carries(@Nullable List<String> cookies, String name) {
			for (int i = 0; cookies != null && i < cookies.size(); i++) {
				if (Cookies.bounds(cookies.get(i), name) != Cookies.ABSENT) {
					return true;
				}
			}
			return false;
		}

	}

}
