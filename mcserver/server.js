#!/usr/bin/env node
// A small offline Minecraft Java server (flying-squid) with Jarvis's chat API plugin.
//
//   node server.js [--port 25565] [--host 127.0.0.1] [--api-port 4711] [--api-host 127.0.0.1]
//                  [--api-dialect upstream|fork|v2] [--api-token T] [--api-fail-polls 0] [--api-list-prefix '']
//                  [--lag-seconds 12]
//                  [--max-seconds 0] [--quiet]
//
// The chat API plugin (raspberryjuice.js) behaves like RaspberryJuice (--api-dialect upstream),
// its Paper fork RaspberryJuiceReload (fork) or RaspberryJuice 2.x (v2; --api-token sets its
// auth-token, also read from $MCSERVER_API_TOKEN); --api-fail-polls N answers Fail to one chat poll in N;
// --api-list-prefix decorates the tab-list names entity.getName returns (upstream), e.g. '§7[Member] §f'.
// SIGUSR2 starts a lag spike of --lag-seconds: the plugin runs no command and answers nothing
// for that long, while chat keeps being recorded (as a Bukkit server whose main thread stalls).
//
// Chat is vanilla's (vanilla_chat.js): player_chat packets, /msg /tell /w with vanilla's formats,
// the spam kick, illegal characters; each message, command and kick is one `VANILLA {...}` line
// on stdout. Console commands are read from stdin, one a line (flying-squid's console: `kick NAME`).
//
// Minecraft Java VERSION below (join with a client of exactly that version), offline mode
// (no Mojang account or session lookups), a small flat in-memory world (nothing written to
// disk, starts in about a second). Port 0 picks a free port. When both the game port and the
// API port listen it prints one line:  READY port=<game port> api_port=<api port> version=<v>
'use strict'

const path = require('path')
const { parseArgs } = require('util')

const VERSION = '1.21.4'

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '25565' },
    host: { type: 'string', default: '127.0.0.1' },
    'api-port': { type: 'string', default: '4711' },
    'api-host': { type: 'string', default: '127.0.0.1' },
    'api-dialect': { type: 'string', default: 'upstream' },
    'api-token': { type: 'string', default: process.env.MCSERVER_API_TOKEN || '' },
    'api-fail-polls': { type: 'string', default: '0' },
    'api-list-prefix': { type: 'string', default: '' },
    'lag-seconds': { type: 'string', default: '12' },
    'max-seconds': { type: 'string', default: '0' }, // stop by itself after this long (0: never)
    quiet: { type: 'boolean', default: false }
  }
})

let flyingSquid
try {
  flyingSquid = require('flying-squid')
} catch (err) {
  console.error('mcserver: node_modules missing: run `make setup` (or `npm ci` in mcserver/)')
  process.exit(2)
}

const serv = flyingSquid.createMCServer({
  motd: 'Jarvis test server (flying-squid)',
  port: Number(args.port),
  host: args.host,
  'max-players': 20,
  'online-mode': false,
  logging: false, // no log files
  noConsoleOutput: args.quiet,
  gameMode: 1,
  difficulty: 0,
  worldFolder: undefined, // in memory
  generation: { name: 'superflat', options: { worldHeight: 80 } },
  kickTimeout: 10000,
  plugins: {
    [path.join(__dirname, 'vanilla_chat.js')]: {},
    [path.join(__dirname, 'raspberryjuice.js')]: {
      host: args['api-host'],
      port: Number(args['api-port']),
      dialect: args['api-dialect'],
      token: args['api-token'],
      failPollsEvery: Number(args['api-fail-polls']),
      listNamePrefix: args['api-list-prefix']
    }
  },
  modpe: false,
  'view-distance': 2,
  'player-list-text': { header: 'Jarvis test server', footer: 'ask: jarvis, what do cows drop?' },
  'everybody-op': false,
  'max-entities': 10,
  version: VERSION
})

let gamePort = null
let apiPort = null
function announce () {
  if (gamePort !== null && apiPort !== null) {
    console.log(`\nREADY port=${gamePort} api_port=${apiPort} version=${VERSION}`)
  }
}
serv.on('listening', () => {
  gamePort = serv._server.socketServer.address().port
  announce()
})
serv.on('raspberryJuiceListening', port => {
  apiPort = port
  announce()
})
serv.on('raspberryJuiceError', () => process.exit(3))
serv.on('error', err => {
  if (err && err.code === 'EADDRINUSE') {
    console.error(`mcserver: port ${args.port} is in use`)
    process.exit(3)
  }
})

function stop () {
  serv.raspberryJuice?.close()
  process.exit(0) // flying-squid's exit hook kicks the players and closes the server
}
process.on('SIGUSR2', () => serv.raspberryJuice?.lag(Number(args['lag-seconds'])))
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
const maxSeconds = Number(args['max-seconds'])
if (maxSeconds > 0) setTimeout(stop, maxSeconds * 1000).unref()
