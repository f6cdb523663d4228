// A flying-squid plugin that speaks the chat subset of the Minecraft Pi / RaspberryJuice API on a
// local TCP port, behaving as the real Bukkit plugins do (zhuowei/RaspberryJuice RemoteSession,
// with `dialect: 'fork'` its Paper fork RaspberryJuiceReload, with `dialect: 'v2'`
// sakebomb/RaspberryJuice 2.x; docs/bridge.md cites the functions), so that Jarvis is tested
// against what real servers do, not against a kinder idea:
//
// - Each connection queues the lines it receives; once per tick (50 ms) every queued line of every
//   connection runs, in order, and its reply (if any) is written. A lag spike (`lag(seconds)`, or
//   SIGUSR2 through server.js) stalls the ticks: no command runs and nothing is answered until it
//   ends, while chat keeps being queued (the real chat event is asynchronous).
// - A line without `(`, or whose `(` is its last character, throws before any command runs: no
//   reply. Arguments are split like Java's split(","), which drops trailing empty strings.
// - Any command that throws or is unknown is answered `Fail`; `failPollsEvery: n` makes every
//   n-th events.chat.posts throw (the chat stays queued for the next poll).
//
//   command                  upstream                              fork
//   chat.post(message)       (nothing); `Fail` if only commas      Success
//   events.clear()           (nothing)                             Success
//   events.chat.posts()      id,msg|id,msg (verbatim)              id,msg|... with `|` `,` as `\|` `\,`
//   entity.getName(id)       tab-list name (listNamePrefix + name); Fail if unknown
//                            nothing if unknown, Fail if nobody online
//   world.getPlayerIds()     id|id|... or Fail when nobody is online (both)
//   anything else            Fail (no aliases: events.clearAll, world.getPlayerEntityIds do not exist)
//
// v2 (2.x, RemoteSession.handleLine/handleCommand/tryAuth/readBoundedLine) replies as upstream
// does, except: a line without `(` or not ending in `)` answers Fail; only \n ends a line (\r is
// dropped) and a line over 16384 characters closes the connection; entity.getName answers the
// list name as plain text (colour codes gone) or nothing, also with nobody online. With `token`
// set, auth(<token>) answers 1 (also when already authenticated, or with no token set), a wrong
// token Fail, the third wrong one closes the connection, and every other command before a good
// auth answers Fail. (The older plugins answer auth Fail: an unknown command.)
//
// Event buffers are per connection (a new connection starts empty), and bounded.
// Settings (flying-squid `plugins` entry): { host: '127.0.0.1', port: 4711, maxEvents: 1000,
//   dialect: 'upstream' | 'fork' | 'v2', failPollsEvery: 0, listNamePrefix: '', token: '' }.
'use strict'

const net = require('net')

const TICK_MS = 50
const MAX_COMMANDS_PER_TICK = 9000 // RemoteSession.tick defers the rest to the next tick
const MAX_LINE_LENGTH = 16384 // 2.x: RemoteSession.MAX_LINE_LENGTH
const MAX_AUTH_FAILURES = 3 // 2.x: RemoteSession.MAX_AUTH_FAILURES
const NO_REPLY = null

class NoReply extends Error {} // thrown outside the command handler: the plugin sends nothing

// Java's text.split(","): trailing empty strings removed ("" gives [""], "," gives []).
function javaSplit (text) {
  if (text === '') return ['']
  const parts = text.split(',')
  while (parts.length && parts[parts.length - 1] === '') parts.pop()
  return parts
}

module.exports.server = function (serv) {
  // flying-squid calls this with `this` = our plugin entry, whose .settings is our options object.
  const options = {
    host: '127.0.0.1', port: 4711, maxEvents: 1000, dialect: 'upstream', failPollsEvery: 0, listNamePrefix: '',
    token: '', ...(this?.settings || {})
  }
  if (!['upstream', 'fork', 'v2'].includes(options.dialect)) throw new Error(`unknown dialect ${options.dialect}`)
  if (options.token && options.dialect !== 'v2') throw new Error('only RaspberryJuice 2.x (v2) has an auth token')
  const fork = options.dialect === 'fork'
  const v2 = options.dialect === 'v2'
  const sessions = new Set()
  let polls = 0
  let lagUntil = 0

  serv.raspberryJuice = { sessions, options, listening: false }

  // Every player's chat (not commands) goes to every connected session's buffer, at once (the
  // real chat event is async: it is queued even while the main thread lags). A vanilla server
  // kicks a client that sends line breaks in chat; flying-squid does not check: made a space.
  serv.raspberryJuice.recordChat = (player, message) => {
    const text = message.replace(/[\r\n]/g, ' ')
    for (const session of sessions) {
      session.chatEvents.push([player.id, text])
      if (session.chatEvents.length > options.maxEvents) session.chatEvents.shift()
    }
  }

  serv.raspberryJuice.lag = seconds => {
    lagUntil = Math.max(lagUntil, Date.now() + seconds * 1000)
    serv.info(`[raspberryjuice] lag spike: no command runs for ${seconds} s`)
  }

  function playerById (id) {
    return serv.players.find(p => String(p.id) === String(id))
  }

  function command (session, name, args) {
    switch (name) {
      case 'chat.post': {
        if (!fork && args.length === 0) throw new Error('StringIndexOutOfBoundsException') // "" then substring(0, -1)
        // An object, not a string: flying-squid would otherwise read `&c` as a colour code.
        serv.broadcast({ text: args.join(',') })
        return fork ? 'Success' : NO_REPLY
      }
      case 'events.chat.posts': {
        polls += 1
        if (options.failPollsEvery && polls % options.failPollsEvery === 0) {
          throw new Error('ConcurrentModificationException') // the queue is left as it was
        }
        const events = session.chatEvents
        session.chatEvents = []
        const escape = text => fork ? text.replace(/\|/g, '\\|').replace(/,/g, '\\,') : text
        return events.map(([id, text]) => `${id},${escape(text)}`).join('|')
      }
      case 'events.clear':
        session.chatEvents = []
        return fork ? 'Success' : NO_REPLY
      case 'entity.getName': {
        if (!/^-?[0-9]+$/.test(args[0])) throw new Error('NumberFormatException')
        const player = playerById(args[0])
        if (player && v2) return (options.listNamePrefix + player.username).replace(/\u00a7./g, '') // PlainText.plain
        if (player) return fork ? player.username : options.listNamePrefix + player.username
        if (fork) return 'Fail'
        if (v2) return NO_REPLY // getEntity searches the worlds: null, even with nobody online
        if (!serv.players.length) throw new Error('NullPointerException') // no host player to search
        return NO_REPLY // upstream logs "not found in entity.getName" and sends nothing
      }
      case 'world.getPlayerIds':
        return serv.players.length ? serv.players.map(p => p.id).join('|') : 'Fail'
      default:
        throw new Error(`${name} is not supported`)
    }
  }

  // 2.x's tryAuth: constant-time in the plugin (timing is not what is tested here)
  function auth (session, args) {
    if (session.authenticated) return '1'
    if ((args[0] ?? '') === options.token) {
      session.authenticated = true
      return '1'
    }
    session.authFailures += 1
    if (session.authFailures >= MAX_AUTH_FAILURES) {
      serv.warn(`[raspberryjuice] closing an API connection after ${session.authFailures} failed auth attempts`)
      session.closeAfterReply = true
    }
    return 'Fail'
  }

  function handleLine (session, line) {
    const open = line.indexOf('(')
    if (v2 && (open < 0 || !line.endsWith(')'))) {
      serv.warn(`[raspberryjuice] ignoring malformed command: ${JSON.stringify(line.slice(0, 60))}`)
      return 'Fail'
    }
    if (open < 0 || open + 1 > line.length - 1) throw new NoReply(`cannot parse ${JSON.stringify(line.slice(0, 60))}`)
    const name = line.slice(0, open)
    if (v2 && name === 'auth') return auth(session, javaSplit(line.slice(open + 1, -1)))
    if (!session.authenticated) return 'Fail'
    try {
      return command(session, name, javaSplit(line.slice(open + 1, -1)))
    } catch (err) {
      serv.warn(`[raspberryjuice] ${name} failed: ${err.message}`)
      return 'Fail'
    }
  }

  const ticker = setInterval(() => {
    if (Date.now() < lagUntil) return
    for (const session of sessions) {
      let handled = 0
      while (session.lines.length && handled < MAX_COMMANDS_PER_TICK && !session.socket.destroyed) {
        const line = session.lines.shift()
        handled += 1
        let reply
        try {
          reply = handleLine(session, line)
        } catch (err) {
          serv.warn(`[raspberryjuice] ${err.message}`) // the tick's exception: logged, no reply
          continue
        }
        if (reply !== NO_REPLY) session.socket.write(reply + '\n')
        if (session.closeAfterReply) {
          session.socket.end()
          sessions.delete(session)
          break
        }
      }
    }
  }, TICK_MS)

  const server = net.createServer(socket => {
    const session = { chatEvents: [], buffer: '', lines: [], socket, authenticated: !options.token, authFailures: 0 }
    sessions.add(session)
    socket.setEncoding('utf8')
    socket.setNoDelay(true)
    socket.setKeepAlive(true)
    serv.info(`[raspberryjuice] API client connected from ${socket.remoteAddress}`)
    socket.on('data', chunk => {
      session.buffer += chunk
      if (v2) { // readBoundedLine: only \n ends a line, \r is dropped, over MAX_LINE_LENGTH closes
        const parts = session.buffer.split('\n')
        session.buffer = parts.pop()
        for (const line of parts) session.lines.push(line.replace(/\r/g, ''))
        if (parts.some(line => line.length > MAX_LINE_LENGTH) || session.buffer.length > MAX_LINE_LENGTH) {
          socket.destroy()
        }
        return
      }
      // BufferedReader.readLine: \n, \r or \r\n end a line.
      let match
      while ((match = /\r\n|\r(?!$)|\n/.exec(session.buffer))) {
        session.lines.push(session.buffer.slice(0, match.index))
        session.buffer = session.buffer.slice(match.index + match[0].length)
      }
      if (session.buffer.length > 1 << 20) socket.destroy() // a line longer than 1 MiB is not a command
    })
    const forget = () => {
      if (sessions.delete(session)) serv.info('[raspberryjuice] API client disconnected')
    }
    socket.on('close', forget)
    socket.on('error', forget)
  })
  server.on('error', err => {
    serv.err(`[raspberryjuice] cannot listen on ${options.host}:${options.port}: ${err.message}`)
    serv.emit('raspberryJuiceError', err)
  })
  server.listen(options.port, options.host, () => {
    serv.raspberryJuice.listening = true
    serv.raspberryJuice.port = server.address().port
    serv.emit('raspberryJuiceListening', server.address().port)
  })
  serv.raspberryJuice.close = () => {
    clearInterval(ticker)
    for (const session of sessions) sessions.delete(session)
    server.close()
  }
}

module.exports.player = function (player, serv) {
  // 'chat' is flying-squid's behaviour event for a chat line (commands are a separate event);
  // `cancelled` is true when another plugin vetoed the message (RaspberryJuice: ignoreCancelled).
  player.on('chat', ({ message }, cancelled) => {
    if (!cancelled && typeof message === 'string') serv.raspberryJuice?.recordChat(player, message)
  })
}
