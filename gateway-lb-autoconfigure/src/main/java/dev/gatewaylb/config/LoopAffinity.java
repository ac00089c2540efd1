package dev.gatewaylb.config;

/**
 * The values of {@code pool.loop-affinity}: whether a request's upstream connection is
 * taken on the request's own event loop.
 */
public enum LoopAffinity {

	/**
	 * An idle connection of the caller's event loop first, else a new one there, else
	 * (the endpoint's {@code max-connections} reached) another loop's idle connection,
	 * else wait. The request and its upstream connection then share a loop, and no write
	 * is handed to another one.
	 */
	PREFERRED,

	/**
	 * Reactor Netty's pool: any idle connection of the endpoint, whatever loop it lives
	 * on.
	 */
	OFF

}
