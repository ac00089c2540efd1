package dev.gatewaylb.internal.upstream;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpStatusClass;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;

/**
 * Drops the informational answers (1xx) an HTTP/1.1 endpoint sends before its final one,
 * such as {@code 103 Early Hints}, so that the exchange gets the final answer.
 * <p>
 * Reactor Netty's client passes over a {@code 100 Continue} only: it takes any other 1xx
 * for the answer, ends the exchange on it, and drops the real answer that follows as a
 * second response. The gateway then has a 103 to send as its final answer, which a client
 * takes for an informational one too and waits for ever. Netty's codec already reads a
 * 1xx as a head without a body and the next head as the answer to the same request; this
 * handler, right after the codec, keeps the 1xx heads (and the empty end the codec gives
 * each) from Reactor Netty. Spring WebFlux has no way to send a 1xx to the client, so the
 * hints are not passed on. {@code 101 Switching Protocols} is an answer (a WebSocket's),
 * and {@code 100} is left to Reactor Netty.
 * <p>
 * One per connection, on its event loop: the one field needs no synchronization. For an
 * ordinary answer it costs one type check per message read.
 */
final class InformationalAnswers extends ChannelInboundHandlerAdapter {

	static final String NAME = "gateway-lb.informational-answers";

	/**
	 * Whether the messages read belong to a 1xx being dropped, until its end.
	 */
	private boolean dropping;

	@Override
	public void channelRead(ChannelHandlerContext ctx, Object msg) {
		if (msg instanceof HttpResponse response && isDropped(response.status().code())) {
			this.dropping = !(msg instanceof LastHttpContent);
			ReferenceCountUtil.release(msg);
			readOn(ctx);
			return;
		}
		if (this.dropping && msg instanceof HttpContent) {
			this.dropping = !(msg instanceof LastHttpContent);
			ReferenceCountUtil.release(msg);
			readOn(ctx);
			return;
		}
		ctx.fireChannelRead(msg);
	}

	private static boolean isDropped(int status) {
		return HttpStatusClass.INFORMATIONAL.contains(status) && status != 100 && status != 101;
	}

	/**
	 * Nobody downstream asked for the messages dropped: when reads are manual, the final
	 * answer must still be read.
	 */
	private static void readOn(ChannelHandlerContext ctx) {
		if (!ctx.channel().config().isAutoRead()) {
			ctx.read();
		}
	}

}
