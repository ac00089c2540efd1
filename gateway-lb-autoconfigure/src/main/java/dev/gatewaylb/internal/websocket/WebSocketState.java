package dev.gatewaylb.internal.websocket;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.gatewaylb.internal.balance.Snapshot;
import dev.gatewaylb.internal.feature.Feature;
import dev.gatewaylb.internal.feature.ServiceView;
import org.jspecify.annotations.Nullable;

/**
 * One service's open WebSocket sessions, and what its drained endpoints' sessions are
 * given ({@code drain.websocket-grace}). The sessions carry over from each of the
 * service's states to the next, so that a refresh forgets none.
 * <p>
 * A session is registered when the client's side of it starts and removed when it ends,
 * on the event loops (a concurrent set: a few operations per session, none per message).
 * The {@code websocket-drain} job looks at them on the control thread every
 * {@link #INTERVAL}: an endpoint that drains, or is no longer a member of the service, is
 * noted the first time it is seen so; once it has been so for the grace, each of its
 * sessions is closed with 1001 (going away), its client told to reconnect, which picks
 * another endpoint. An endpoint undrained before then keeps its sessions, and its count
 * starts again at its next drain. With a grace of 0 the job does nothing: the sessions of
 * a drained endpoint stay until one side closes them.
 */
public final class WebSocketState {

	/**
	 * The feature: a service's state, and the {@code websocket-drain} job.
	 */
	public static final Feature<DrainSettings, WebSocketState> FEATURE = new Feature<>() {

		@Override
		public Class<WebSocketState> stateType() {
			return WebSocketState.class;
		}

		@Override
		public WebSocketState next(@Nullable WebSocketState previous, DrainSettings settings, Context service) {
			if (previous != null && previous.settings.equals(settings)) {
				return previous;
			}
			return new WebSocketState(settings, (previous != null) ? previous.sessions : new Sessions());
		}

		@Override
		public List<Job<WebSocketState>> jobs() {
			return List.of(new Job<>("websocket-drain", INTERVAL, WebSocketState::closeDrained));
		}

	};

	/**
	 * How often the drained endpoints' sessions are looked at: a session is closed at
	 * most this long after its grace.
	 */
	public static final Duration INTERVAL = Duration.ofMillis(250);

	private final DrainSettings settings;

	private final Sessions sessions;

	private WebSocketState(DrainSettings settings, Sessions sessions) {
		this.settings = settings;
		this.sessions = sessions;
	}

	/**
	 * Returns a state with these settings and no session: for tests.
	 * @param settings the settings
	 * @return the state
	 */
	static WebSocketState of(DrainSettings settings) {
		return new WebSocketState(settings, new Sessions());
	}

	/**
	 * Returns the settings the state was built from.
	 * @return the settings
	 */
	public DrainSettings settings() {
		return this.settings;
	}

	/**
	 * Registers a session whose client's side started.
	 * @param session the session
	 */
	public void opened(Session session) {
		this.sessions.open.add(session);
	}

	/**
	 * Removes a session that ended; removing one never registered does nothing.
	 * @param session the session
	 */
	public void closed(Session session) {
		this.sessions.open.remove(session);
	}

	/**
	 * Returns how many sessions are open.
	 * @return the count
	 */
	public int open() {
		return this.sessions.open.size();
	}

	/**
	 * Closes the sessions of the endpoints drained or gone for the grace: the
	 * {@code websocket-drain} job, on the control thread.
	 * @param service the service
	 */
	void closeDrained(ServiceView service) {
		Sessions sessions = this.sessions;
		long grace = this.settings.websocketGraceNanos();
		if (grace <= 0) {
			sessions.drainedSince = Map.of();
			return;
		}
		if (sessions.open.isEmpty() && sessions.drainedSince.isEmpty()) {
			return;
		}
		long now = service.nanoTime();
		Map<String, Long> before = sessions.drainedSince;
		Map<String, Long> since = new HashMap<>();
		Snapshot<?> snapshot = service.snapshot();
		Set<String> members = new HashSet<>();
		for (int i = 0; i < snapshot.size(); i++) {
			String address = snapshot.endpoint(i).address();
			members.add(address);
			if (snapshot.isDraining(i)) {
				since.put(address, before.getOrDefault(address, now));
			}
		}
		for (Session session : sessions.open) {
			String address = session.endpoint();
			if (!members.contains(address)) {
				since.putIfAbsent(address, before.getOrDefault(address, now));
			}
		}
		sessions.drainedSince = since;
		for (Session session : sessions.open) {
			Long drained = since.get(session.endpoint());
			if (drained != null && now - drained >= grace) {
				session.goAway();
			}
		}
	}

	/**
	 * One open WebSocket session, as the drain sees it.
	 */
	public interface Session {

		/**
		 * Returns the endpoint the session is open to.
		 * @return its {@code host:port}
		 */
		String endpoint();

		/**
		 * Closes the session with 1001 (going away), both sides; called on the control
		 * thread, perhaps more than once while the closing is under way.
		 */
		void goAway();

	}

	/**
	 * The open sessions, and since when each endpoint they are open to has drained or
	 * been gone: what carries over from one state to the next.
	 */
	private static final class Sessions {

		final Set<Session> open = ConcurrentHashMap.newKeySet();

		/**
		 * Since when, by the service's clock, each endpoint drained or left; read and
		 * replaced by the job only, on the control thread.
		 */
		Map<String, Long> drainedSince = Map.of();

	}

}
