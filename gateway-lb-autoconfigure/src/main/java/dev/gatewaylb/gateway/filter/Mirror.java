package dev.gatewaylb.gateway.filter;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;

import dev.gatewaylb.balance.Snapshot;
import dev.gatewaylb.gateway.discovery.Member;
import dev.gatewaylb.gateway.runtime.MirrorState;
import dev.gatewaylb.gateway.runtime.ServiceRuntime;
import dev.gatewaylb.gateway.settings.MirrorSettings;
import dev.gatewaylb.gateway.upstream.Outcome;
import dev.gatewaylb.rollout.RolloutTrack;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpMethod;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.server.ServerWebExchange;

/**
 * One mirrored request ({@code mirror}): a copy of an exchange's request sent to the
 * shadow service, whose answer is compared with the primary's and never reaches the
 * client.
 * <p>
 * The primary never waits for the mirror: a request without a body is mirrored when the
 * exchange starts, one with a body (at most {@code max-body}, of a declared length) once
 * the primary has read it, from a copy taken as it went by. The mirror is an attempt of
 * the shadow service like any other (picked by the shadow's algorithm, counted in flight,
 * charged to the shadow's endpoint by passive health, never to the primary's), sent
 * through the shadow's own pools; it is cancelled, and charged to nobody, when it is
 * still running {@code timeouts.response} of the shadow after it started.
 * <p>
 * Comparing: each side hands in what it saw when it is done (the primary when its
 * exchange ends, the shadow when its answer's body ends or it fails), and the second to
 * arrive compares: the status classes, and with {@code compare: body} a CRC-32C and the
 * length of each body, computed as the bytes stream by (no copy of a body is kept). The
 * fields of each side are written by that side before it arrives, and read by the one
 * that arrives last, after the atomic count of arrivals: no lock.
 */
final class Mirror {

	/**
	 * Headers the mirror does not copy: those of one connection (RFC 9110 section 7.6.1),
	 * and those the shadow's own request sets.
	 */
	private static final Set<String> NOT_COPIED = Set.of("connection", "keep-alive", "proxy-connection",
			"proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host",
			"content-length");

	private final ProxiedExchange owner;

	private final MirrorState state;

	private final MirrorSettings settings;

	private final ServiceRuntime shadow;

	private final HttpMethod method;

	private final String path;

	private final ExchangeLease lease = new ExchangeLease();

	private final AtomicInteger arrivals = new AtomicInteger(2);

	private final AtomicBoolean primaryEnded = new AtomicBoolean();

	private final boolean compareBodies;

	/**
	 * The rollout whose shadow stage counts the comparison, or {@code null}.
	 */
	private final @Nullable RolloutTrack shadowStage;

	// The primary's side: written on its exchange's threads before it arrives.

	private int primaryStatus = -1;

	private final @Nullable CRC32C primaryDigest;

	private long primaryLength;

	private boolean primaryBodyEnded;

	// The shadow's side: written on its connection's event loop before it arrives.

	private int shadowStatus = -1;

	private final @Nullable CRC32C shadowDigest;

	private long shadowLength;

	private volatile boolean timedOut;

	private Mirror(ProxiedExchange owner, MirrorState state, MirrorSettings settings, ServiceRuntime shadow,
			HttpMethod method, String path, @Nullable RolloutTrack shadowStage) {
		this.owner = owner;
		this.shadowStage = shadowStage;
		this.state = state;
		this.settings = settings;
		this.shadow = shadow;
		this.method = method;
		this.path = path;
		this.compareBodies = settings.compare() == MirrorSettings.Compare.BODY;
		this.primaryDigest = this.compareBodies ? new CRC32C() : null;
		this.shadowDigest = this.compareBodies ? new CRC32C() : null;
	}

	/**
	 * Mirrors the owner's exchange if the service's settings take it: its method, its
	 * share by the request id, a body small enough of a declared length, a place among
	 * {@code max-concurrent}, a shadow service to send it to. A request with a body has
	 * its body copied as the primary reads it: the owner's exchange is replaced by one
	 * whose request hands out the same bytes.
	 * @param owner the exchange's owner
	 * @param primary the service's runtime
	 * @param settings its mirroring
	 * @param shadowStage the rollout whose shadow stage the comparison counts for, or
	 * {@code null}
	 * @return the mirror, or {@code null} when the request is not mirrored
	 */
	static @Nullable Mirror start(ProxiedExchange owner, ServiceRuntime primary, MirrorSettings settings,
			@Nullable RolloutTrack shadowStage) {
		ServerWebExchange exchange = owner.exchange();
		ServerHttpRequest request = exchange.getRequest();
		String method = request.getMethod().name();
		if (!settings.methods().contains(method) || !chosen(request.getId(), settings.percent())) {
			return null;
		}
		MirrorState state = primary.mirror();
		String target = settings.target();
		ServiceRuntime shadow = (target != null) ? owner.services().runtimes().find(target) : null;
		HttpHeaders headers = request.getHeaders();
		long length = headers.getContentLength();
		boolean body = RequestBodyIdle.hasBody(headers);
		if (shadow == null || !shadow.isBalancedHere() || (body && (length < 0 || length > settings.maxBodyBytes()))) {
			// No shadow yet (its first discovery answer is on its way), or a body the
			// mirror would have to copy without knowing how much.
			state.dropped();
			return null;
		}
		if (!state.tryAcquire(settings.maxConcurrent())) {
			return null;
		}
		Mirror mirror = new Mirror(owner, state, settings, shadow, HttpMethod.valueOf(method),
				request.getPath().value(), shadowStage);
		owner.lease().mirror(mirror);
		if (!body) {
			mirror.send(null);
		}
		else {
			owner.replaceExchange(exchange.mutate().request(new CopiedBody(request, (int) length, mirror)).build());
		}
		return mirror;
	}

	/**
	 * Returns the mirroring of a rollout's shadow stage: every request of the split's
	 * methods without a body or with one up to 64 KB, GET and HEAD, the status compared,
	 * at most 64 in flight.
	 * @param target the rollout's target
	 * @return the settings
	 */
	static MirrorSettings shadowStage(String target) {
		return new MirrorSettings(target.toLowerCase(Locale.ROOT), 100, MirrorSettings.NONE.maxConcurrent(),
				MirrorSettings.NONE.maxBodyBytes(), MirrorSettings.Compare.STATUS, MirrorSettings.NONE.methods());
	}

	/**
	 * Returns whether a request is among the {@code percent} mirrored: a stable hash of
	 * its id, so that each request is decided once however often it is asked.
	 */
	private static boolean chosen(String requestId, int percent) {
		if (percent >= 100) {
			return true;
		}
		int hash = requestId.hashCode() * 0x9E3779B9;
		return Math.floorMod(hash ^ (hash >>> 16), 100) < percent;
	}

	/**
	 * Notes the status of the primary's answer, when an upstream answered the client.
	 * @param status the status
	 */
	void primaryAnswered(int status) {
		this.primaryStatus = status;
	}

	/**
	 * Adds a chunk of the primary's answer to its digest, as the gateway writes it.
	 * @param buffer the chunk, left as it is
	 */
	void primaryBody(DataBuffer buffer) {
		CRC32C digest = this.primaryDigest;
		if (digest != null) {
			try (DataBuffer.ByteBufferIterator buffers = buffer.readableByteBuffers()) {
				while (buffers.hasNext()) {
					ByteBuffer bytes = buffers.next();
					this.primaryLength += bytes.remaining();
					digest.update(bytes);
				}
			}
		}
	}

	/**
	 * Notes that the primary's answer was written whole.
	 */
	void primaryBodyEnded() {
		this.primaryBodyEnded = true;
	}

	/**
	 * Notes that the primary's exchange is over, whatever its end: its side arrives.
	 */
	void primaryEnded() {
		if (this.primaryEnded.compareAndSet(false, true)) {
			arrive();
		}
	}

	/**
	 * Sends the mirror: picks an endpoint of the shadow, claims it, and sends the request
	 * through the shadow's client. Never throws; what fails is the mirror's.
	 * @param body the request's body, or {@code null} for none
	 */
	void send(byte @Nullable [] body) {
		Snapshot<Member> snapshot = this.shadow.snapshot();
		int index = snapshot.select(null);
		if (index < 0) {
			shadowEnded();
			return;
		}
		Attempt attempt = new Attempt(snapshot.claim(index), snapshot.ewmaDecayNanos(), this.shadow,
				snapshot.value(index), this.lease, false, 0, null, -1);
		this.lease.hold(attempt);
		HttpHeaders headers = this.owner.exchange().getRequest().getHeaders();
		Flux<Integer> answer = this.shadow.upstream().client().headers((out) -> headers.forEach((name, values) -> {
			if (!NOT_COPIED.contains(name.toLowerCase(Locale.ROOT))) {
				out.add(name, values);
			}
		}))
			.request(this.method)
			.uri(this.owner.endpointUrl(attempt.member()))
			.send((request, out) -> (body != null) ? out.sendByteArray(Mono.just(body)) : out)
			.response((response, content) -> {
				this.shadowStatus = response.status().code();
				return content.doOnNext(this::shadowBody).then(Mono.just(this.shadowStatus));
			})
			.contextWrite(attempt.context());
		Duration deadline = this.shadow.settings().upstream().responseTimeout();
		if (!deadline.isZero()) {
			// Still running a response timeout after it started: cancelled, and, as any
			// cancellation of ours, charged to nobody (the lease says so before the
			// cancel reaches the connection).
			answer = answer.takeUntilOther(Mono.delay(deadline).doOnNext((tick) -> {
				this.timedOut = true;
				this.lease.clientGone();
			}));
		}
		answer.doFinally((signal) -> {
			// The client ends the attempt on its connection's events; what it has not
			// settled by now was given up by us.
			attempt.end(Outcome.Kind.CANCELLED);
			this.lease.close();
			if (this.timedOut || signal != reactor.core.publisher.SignalType.ON_COMPLETE) {
				this.shadowStatus = -1;
			}
			shadowEnded();
		}).subscribe(null, (error) -> attempt.end(Outcome.classify(attempt.phase(), error)));
	}

	private void shadowBody(ByteBuf buffer) {
		CRC32C digest = this.shadowDigest;
		if (digest != null) {
			for (ByteBuffer bytes : buffer.nioBuffers()) {
				this.shadowLength += bytes.remaining();
				digest.update(bytes);
			}
		}
	}

	/**
	 * The shadow's side is done: its place is given back, and it arrives.
	 */
	private void shadowEnded() {
		this.state.release();
		arrive();
	}

	private void arrive() {
		if (this.arrivals.decrementAndGet() == 0) {
			compare();
		}
	}

	private void compare() {
		int primary = this.primaryStatus;
		int shadow = this.shadowStatus;
		if (primary < 0 || shadow < 0 || (this.compareBodies && !this.primaryBodyEnded)) {
			// No answer from the shadow, or none from the primary to compare it with.
			this.state.failed();
			return;
		}
		if (this.settings.compare() == MirrorSettings.Compare.NONE) {
			this.state.matched();
			return;
		}
		boolean statusDiffers = primary / 100 != shadow / 100;
		boolean bodyDiffers = !statusDiffers && this.compareBodies && (this.primaryLength != this.shadowLength
				|| this.primaryDigest.getValue() != this.shadowDigest.getValue());
		RolloutTrack stage = this.shadowStage;
		if (stage != null) {
			stage.shadowAnswered(statusDiffers || bodyDiffers);
		}
		if (statusDiffers || bodyDiffers) {
			this.state.mismatched(
					new MirrorState.Mismatch(primary, shadow, bodyDiffers, this.path, System.currentTimeMillis()));
		}
		else {
			this.state.matched();
		}
	}

	/**
	 * The primary's request with its body copied for the mirror as it goes by; the mirror
	 * is sent with the copy once the body has gone by whole.
	 */
	private static final class CopiedBody extends ServerHttpRequestDecorator {

		private final byte[] copy;

		private final Mirror mirror;

		private int copied;

		private final AtomicBoolean settled = new AtomicBoolean();

		CopiedBody(ServerHttpRequest delegate, int length, Mirror mirror) {
			super(delegate);
			this.copy = new byte[length];
			this.mirror = mirror;
		}

		@Override
		public Flux<DataBuffer> getBody() {
			return super.getBody().doOnNext(this::copy).doOnComplete(() -> {
				if (this.copied != this.copy.length) {
					// Shorter than it declared: nothing whole to mirror.
					abandon();
				}
				else if (this.settled.compareAndSet(false, true)) {
					this.mirror.send(this.copy);
				}
			}).doOnError((error) -> abandon()).doOnCancel(this::abandon);
		}

		private void copy(DataBuffer buffer) {
			int length = Math.min(buffer.readableByteCount(), this.copy.length - this.copied);
			if (length > 0) {
				// Read in place: the primary's read position stays where it was.
				buffer.toByteBuffer(buffer.readPosition(), length).get(this.copy, this.copied, length);
				this.copied += length;
			}
		}

		/**
		 * The primary's body broke or was let go: nothing whole to mirror.
		 */
		private void abandon() {
			if (this.settled.compareAndSet(false, true)) {
				this.mirror.shadowEnded();
			}
		}

	}

}
