# ruff: noqa: RUF001  (Chinese text uses full-width punctuation, as it should)
"""The memory set of ``recall_quality.py``: what a user told an assistant, and how they ask
for it again later.

Each pair is ``(memory, query)``. Memories are things a person says in a chat (facts about
themselves, plans, preferences, constraints), in English and in Chinese. Queries paraphrase
the memory the way people really come back to a topic: other words, often a question, so
that the overlap with the memory's wording is low and a lexical match alone does poorly.
The set was written by hand for this benchmark; nothing here is generated or scraped.
"""

from __future__ import annotations

ENGLISH: tuple[tuple[str, str], ...] = (
    ("My daughter Mia turns seven on the 14th of March.", "When is my kid's birthday?"),
    ("I'm allergic to peanuts, so please never suggest satay.", "Which food must I avoid?"),
    ("We adopted a grey tabby cat called Pixel last spring.", "What is the name of our pet?"),
    (
        "My flight to Tokyo leaves at 9:40 on Friday from gate B12.",
        "When does my plane to Japan depart?",
    ),
    ("I drive a 2016 blue Honda Civic.", "What car do I own?"),
    (
        "My landlord raised the rent to 1,850 euros a month.",
        "How much do I pay for my apartment now?",
    ),
    ("I switched to a vegan diet about two years ago.", "Do I eat meat or dairy?"),
    (
        "My brother Tom lives in Vancouver and works as a nurse.",
        "Where does my sibling live and what's his job?",
    ),
    ("I run 5 kilometres every morning before work.", "What's my daily exercise routine?"),
    (
        "The wifi password at the cabin is maple-ridge-42.",
        "How do I get online at the holiday house?",
    ),
    ("I'm learning to play the cello, lessons are on Tuesdays.", "Which instrument am I studying?"),
    ("My wife Clara is a pediatric surgeon at St. Mary's.", "What does my spouse do for a living?"),
    (
        "I can't stand horror movies, they give me nightmares.",
        "What film genre should you not recommend?",
    ),
    ("Our wedding anniversary is on June 2nd.", "When did we get married?"),
    (
        "I have a meeting with the bank about my mortgage next Thursday.",
        "When is my appointment about the home loan?",
    ),
    ("My favourite author is Ursula K. Le Guin.", "Which writer do I like best?"),
    ("I take 50 mg of sertraline every evening.", "What medication am I on?"),
    ("My office is on the 23rd floor of the Rotterdam tower.", "How high up do I work?"),
    ("I prefer window seats on long flights.", "Where do I like to sit on a plane?"),
    (
        "My son is scared of dogs since one bit him last year.",
        "Why is my boy afraid of certain animals?",
    ),
    ("I'm saving up to buy a sailboat by 2028.", "What big purchase am I putting money aside for?"),
    (
        "The plumber is coming on Monday at 8 to fix the boiler.",
        "When will someone repair the heating?",
    ),
    ("I graduated in mechanical engineering from Delft.", "What did I study at university?"),
    (
        "My grandmother's lasagne recipe uses nutmeg in the béchamel.",
        "What's the secret spice in grandma's pasta bake?",
    ),
    ("I'm lactose intolerant but hard cheese is fine for me.", "Can I have milk products?"),
    ("I work remotely for a fintech startup based in Berlin.", "Where is my employer located?"),
    ("My blood type is O negative.", "What kind of blood do I have?"),
    (
        "I sleep badly when the room is warmer than 19 degrees.",
        "What bedroom temperature keeps me awake?",
    ),
    ("My passport expires in October next year.", "When do I need to renew my travel document?"),
    (
        "We're planning to repaint the living room sage green.",
        "What colour will the lounge walls be?",
    ),
    ("I broke my left wrist skiing in 2019.", "Have I ever had a fracture?"),
    ("My best friend Aisha moved to Nairobi in August.", "Where did my closest pal relocate?"),
    ("I'm training for the Berlin marathon in September.", "Which long race am I preparing for?"),
    ("I only drink decaf after 2 pm.", "What are my coffee habits in the afternoon?"),
    ("My phone is a Pixel 8 with a cracked screen.", "What mobile do I use?"),
    (
        "I volunteer at the animal shelter every other Saturday.",
        "What do I do on some weekends to help out?",
    ),
    (
        "My father had a heart attack at 58, so I watch my cholesterol.",
        "Is there cardiac illness in my family?",
    ),
    (
        "I speak Portuguese fluently because I grew up in Porto.",
        "Which foreign language do I know well?",
    ),
    ("The kids' school starts at 8:15 and ends at 3 pm.", "What are my children's class hours?"),
    (
        "My budget for the new laptop is at most 1,200 dollars.",
        "How much can I spend on a computer?",
    ),
    ("I hate cilantro, it tastes like soap to me.", "Which herb do I dislike?"),
    ("My dentist appointment got moved to the 9th.", "When am I seeing the tooth doctor?"),
    (
        "I'm renovating the bathroom and the tiles arrive in two weeks.",
        "When will the materials for the washroom be delivered?",
    ),
    ("My manager's name is Priya and she's based in London.", "Who is my boss?"),
    ("I keep my bike in the basement storage room, locker 17.", "Where is my bicycle stored?"),
    ("I was born in Cork, Ireland, in 1987.", "Where and when was I born?"),
    ("I'm afraid of heights and avoid glass elevators.", "What phobia do I have?"),
    ("My sister is expecting twins in December.", "Is anyone in my family having babies?"),
    (
        "We host a board game night at our place every first Friday.",
        "What social event happens at my home monthly?",
    ),
    ("My car insurance renews on the first of May.", "When is the vehicle policy due?"),
    ("I need a standing desk because of my back pain.", "Why do I want a special office table?"),
    ("My favourite dish is Thai green curry with tofu.", "What meal do I love most?"),
    ("I'm colour blind, red and green look alike to me.", "Do I have trouble seeing certain hues?"),
    ("I have a black belt in judo.", "Which martial art have I mastered?"),
    (
        "My neighbour Greg lends us his ladder when we need it.",
        "Who can we borrow tools from next door?",
    ),
    ("I'm moving to Lisbon in the spring for a new job.", "Where am I relocating for work?"),
    (
        "I use a screen reader for long documents because of my eyesight.",
        "What assistive tool do I rely on?",
    ),
    (
        "My daughter wants a unicorn cake for her party.",
        "What kind of dessert does my girl want for the celebration?",
    ),
    ("I quit smoking three years ago on New Year's Day.", "When did I stop with cigarettes?"),
    ("My salary is 72,000 a year before tax.", "How much do I earn annually?"),
    ("I'm a night owl and do my best work after 10 pm.", "When am I most productive?"),
    (
        "My in-laws are visiting from Poland for Christmas.",
        "Who is coming to stay over the holidays?",
    ),
    (
        "I keep a spare house key with the neighbour at number 12.",
        "Who has a copy of my front door key?",
    ),
    ("I'm writing a fantasy novel about a city of bridges.", "What is my book project about?"),
    (
        "My internet provider is Ziggo and the contract ends in July.",
        "Who supplies my broadband and until when?",
    ),
    ("I get migraines when I skip lunch.", "What triggers my headaches?"),
    ("My son plays goalkeeper in the under-10 football team.", "What position does my boy play?"),
    ("I prefer tea with oat milk and no sugar.", "How do I take my hot drink?"),
    (
        "My old university friend Sven is getting married in Oslo.",
        "Whose wedding am I invited to in Norway?",
    ),
    (
        "I'm not allowed to lift more than 10 kilos after my surgery.",
        "What physical restriction do I have now?",
    ),
    ("Our family doctor is Dr. Okafor at the Westside clinic.", "Who is our GP?"),
    (
        "My favourite band is Radiohead, I've seen them live four times.",
        "Which musicians do I like most?",
    ),
    (
        "I'm studying for the CFA level two exam in June.",
        "What professional test am I preparing for?",
    ),
    ("My parents live in a small village near Salzburg.", "Where do my mum and dad live?"),
    (
        "I'm vegetarian on weekdays but eat fish at weekends.",
        "What are my eating rules during the week?",
    ),
    ("The gym closes at 11 pm on weekdays and 8 pm on Sundays.", "Until what time can I work out?"),
    (
        "I have a fear of public speaking and my talk is on the 3rd.",
        "What am I nervous about this month?",
    ),
    (
        "My husband snores, so I wear earplugs at night.",
        "Why do I use something in my ears to sleep?",
    ),
    ("I'm a big fan of Formula 1 and support Ferrari.", "Which motorsport team do I cheer for?"),
    (
        "My hotel in Rome is near the Pantheon, booked for four nights.",
        "Where am I staying in Italy?",
    ),
    (
        "The printer in the study needs toner model TN-2420.",
        "Which cartridge does our home printer use?",
    ),
    ("I want to learn to bake sourdough this winter.", "What bread skill do I hope to pick up?"),
    ("My cat needs her kidney medication twice a day.", "How often does my pet get her pills?"),
    ("I'm 1.83 metres tall and wear size 45 shoes.", "What is my height and foot size?"),
    (
        "My kid is gluten intolerant, so we buy special pasta.",
        "Does my child have a dietary problem?",
    ),
    ("Our house was built in 1932 and has single-glazed windows.", "How old is our home?"),
    ("I'm the treasurer of the local chess club.", "What role do I have in the club?"),
    (
        "My favourite season is autumn because of the colours.",
        "Which time of year do I enjoy most?",
    ),
    (
        "I'm trying to cut down on screen time to two hours a day.",
        "What limit am I setting for my phone use?",
    ),
    ("My sister-in-law Hana is a translator from Japanese.", "What does my brother's wife do?"),
    ("I lost my wallet on the tram last Tuesday.", "What did I misplace on public transport?"),
    ("My garden has three apple trees and a small pond.", "What is in my backyard?"),
    (
        "I need to finish the tax return before the end of April.",
        "What's my deadline for the revenue office paperwork?",
    ),
    ("I play the piano by ear but can't read sheet music.", "Can I read musical notation?"),
    ("My twin brother and I share a birthday on July 30th.", "When is my birthday?"),
    (
        "We're going camping in the Ardennes over Easter.",
        "Where are we spending the spring holiday outdoors?",
    ),
    ("I'm on a low-sodium diet for my blood pressure.", "Why should my food have little salt?"),
    ("My grandfather was a fisherman in Brittany.", "What did my granddad do for work?"),
    (
        "I'm planning to propose to Lena in Paris in May.",
        "Where will I ask my girlfriend to marry me?",
    ),
    ("My laptop battery only lasts forty minutes now.", "What's wrong with my computer?"),
    ("I always forget to water the fern in the hallway.", "Which plant do I neglect?"),
    ("My team standup is at 9:30 every weekday.", "When is my daily work meeting?"),
    (
        "I have two kids: Ben who is nine and Lily who is four.",
        "How many children do I have and how old are they?",
    ),
    ("I donated blood for the twentieth time last month.", "How often have I given blood?"),
    ("My favourite holiday spot is a beach hut in Cornwall.", "Where do I like to go on vacation?"),
)

CHINESE: tuple[tuple[str, str], ...] = (
    ("我女儿小雨今年九月上小学一年级。", "孩子什么时候开始读书？"),
    ("我对青霉素过敏，看病时一定要提醒医生。", "有哪种药我不能用？"),
    ("我们家的狗叫豆豆，是一只柯基。", "我的宠物叫什么名字？"),
    ("下周三上午十点我要去银行办房贷。", "我哪天要处理买房借款的事？"),
    ("我老公在一家医院当麻醉师。", "我丈夫是做什么工作的？"),
    ("我每天早上六点起床去公园跑步。", "我平时几点锻炼身体？"),
    ("我不吃香菜，一点都受不了那个味道。", "哪种调料我讨厌？"),
    ("我的车是一辆白色的比亚迪。", "我开的是什么牌子的汽车？"),
    ("我妈妈住在成都，明年打算搬来和我们一起住。", "我母亲以后会住在哪里？"),
    ("我在上海一家游戏公司做程序员。", "我的职业是什么？"),
    ("我的生日是十一月二十三号。", "我哪天过生日？"),
    ("我正在学日语，准备明年去东京留学。", "我打算去哪个国家读书？"),
    ("公司年会定在一月十八号晚上。", "单位的新年聚会是什么时候？"),
    ("我有高血压，每天吃一片降压药。", "我身体有什么慢性病？"),
    ("我们租的房子每个月房租四千五。", "住的地方一个月要交多少钱？"),
    ("我弟弟在深圳读大学，学的是计算机。", "我兄弟在哪里上学，专业是什么？"),
    ("我最喜欢的歌手是周杰伦。", "我最爱听谁的歌？"),
    ("我晚上喝咖啡就睡不着。", "什么饮料会影响我休息？"),
    ("我儿子踢足球，每周六上午训练。", "孩子周末有什么运动课？"),
    ("我的护照明年三月到期。", "出国证件什么时候需要换？"),
    ("我们计划国庆节去云南大理旅游。", "十月份的假期我们要去哪儿玩？"),
    ("我爸爸去年做了心脏搭桥手术。", "家里老人动过什么大手术？"),
    ("我在存钱，打算三年内买一套小房子。", "我攒钱是为了什么？"),
    ("我的工资每个月一万二。", "我一个月挣多少？"),
    ("我怕坐飞机，能坐高铁就坐高铁。", "出行我更喜欢哪种交通方式？"),
    ("我女朋友叫林晓，是一名小学老师。", "我对象是干什么的？"),
    ("我家的无线网密码是sunflower2024。", "家里上网要输入什么？"),
    ("我从小在哈尔滨长大，特别怕热。", "我是在哪个城市长大的？"),
    ("我正在减肥，目标是减到六十公斤。", "我想把体重控制在多少？"),
    ("我奶奶今年九十岁了，身体还很硬朗。", "家里最年长的人多大了？"),
    ("周五下午三点我要看牙医。", "什么时候去看牙齿？"),
    ("我喜欢喝绿茶，尤其是西湖龙井。", "我平时爱喝什么茶？"),
    ("我养了两只猫，一只橘猫一只黑猫。", "我家里有几只宠物？"),
    ("我大学读的是会计专业。", "我以前学的是什么？"),
    ("我的电脑是一台用了五年的联想笔记本。", "我用的是什么电脑？"),
    ("我们小区的快递柜在三号楼门口。", "去哪里取包裹？"),
    ("我每周二和周四晚上去学游泳。", "我一周上几次水上课程？"),
    ("我老婆怀孕五个月了，预产期在八月。", "家里什么时候添新成员？"),
    ("我不能吃辣，吃了胃会疼。", "为什么我不碰麻辣的菜？"),
    ("我的驾照是去年夏天考下来的。", "我什么时候学会开车的？"),
    ("我最好的朋友阿强去了澳大利亚工作。", "我的好哥们现在在哪个国家？"),
    ("我打算下个月换一份离家近的工作。", "我为什么想跳槽？"),
    ("我的手机是华为，屏幕上周摔裂了。", "我的手机出了什么问题？"),
    ("我每天晚上睡前要看半小时书。", "我睡觉之前有什么习惯？"),
    ("我对猫毛过敏，但还是忍不住养猫。", "我对什么动物的毛发有反应？"),
    ("我外婆做的红烧肉要放冰糖。", "老人家炖肉的秘诀是什么？"),
    ("我们家住在十八楼，电梯经常坏。", "我住得有多高？"),
    ("我在准备考研，目标是北京大学。", "我想考哪所学校的研究生？"),
    ("我儿子对花生过敏，出门要带药。", "孩子有什么食物要避开？"),
    ("我周末在一家咖啡店做兼职。", "我休息日还打什么工？"),
    ("我的血型是AB型。", "我是什么血型？"),
    ("我们结婚纪念日是五月二十号。", "我们哪天领的证？"),
    ("我腰不好，不能久坐。", "我身体哪里有毛病导致不能一直坐着？"),
    ("我最喜欢的电影是《霸王别姬》。", "我心中最好的片子是哪部？"),
    ("我每个月给父母寄两千块钱。", "我定期给家里多少生活费？"),
    ("我的信用卡账单每月五号还款。", "哪天要把刷卡的钱还上？"),
    ("我妹妹在杭州开了一家花店。", "我姐妹做什么生意？"),
    ("我每天坐地铁二号线上下班。", "我通勤用什么交通工具？"),
    ("我从去年开始戒烟，到现在一根没抽。", "我还吸烟吗？"),
    ("明天晚上七点和客户在海底捞吃饭。", "跟合作方的饭局定在哪里？"),
    ("我家孩子的班主任姓王，教数学。", "孩子的老师是谁？"),
    ("我在健身房办了一张年卡，花了三千块。", "我锻炼的会员花了多少钱？"),
    ("我有近视，度数大概六百度。", "我的眼睛视力怎么样？"),
    ("我老家在山东青岛，靠海。", "我是哪里人？"),
    ("我打算春节带全家回老家过年。", "过年期间我们去哪里？"),
    ("我不喜欢吵闹的地方，喜欢安静的书店。", "我喜欢什么样的环境？"),
    ("我正在学弹吉他，已经练了半年。", "我在学什么乐器？"),
    ("我的车险下个月十号到期。", "汽车保险什么时候续？"),
    ("我们公司下个月要搬到浦东新区。", "单位要迁到哪里？"),
    ("我爷爷以前是一名铁路工人。", "我祖父年轻时干什么的？"),
    ("我喜欢吃妈妈包的韭菜鸡蛋饺子。", "家里做的哪种面食我最爱？"),
    ("我的体检报告显示血糖有点高。", "我身体检查发现了什么问题？"),
    ("我一般晚上十一点半睡觉。", "我平常几点上床？"),
    ("我儿子今年十二岁，在读六年级。", "我孩子多大了，读几年级？"),
    ("我准备给房子装修，预算二十万。", "我翻新住所打算花多少？"),
    ("我上周在出租车上丢了一把雨伞。", "我最近把什么东西落在车上了？"),
    ("我的邻居李阿姨经常帮我们收快递。", "谁会替我们拿包裹？"),
    ("我很怕蛇，看到图片都会发抖。", "我害怕什么动物？"),
    ("我女儿想学芭蕾舞，已经报了班。", "孩子报了什么兴趣课？"),
    ("我每年体检都在人民医院做。", "我通常去哪家医院检查身体？"),
    ("我对象喜欢向日葵，不喜欢玫瑰。", "我女朋友最喜欢哪种花？"),
    ("我在网上买了一台扫地机器人，还没到货。", "我订的家电送到了吗？"),
    ("我们团队每周一上午九点开例会。", "部门什么时候开会？"),
    ("我的英语口语不好，开会时很紧张。", "我在工作中哪方面比较吃力？"),
    ("我打算明年考一个注册会计师证书。", "我准备拿什么职业资格？"),
    ("我家阳台上种了番茄和辣椒。", "我在家里种了什么蔬菜？"),
    ("我表哥在德国当工程师，很少回国。", "我哪位亲戚在欧洲工作？"),
    ("我的银行卡密码不要存在手机里。", "我对敏感信息有什么要求？"),
    ("我是素食主义者，已经三年不吃肉了。", "我吃荤吗？"),
    ("我每个周末都会去爬山。", "我周末一般做什么运动？"),
    ("我女儿的钢琴考级在七月份。", "孩子的乐器等级考试是什么时候？"),
    ("我在北京租房，离公司大概一个小时车程。", "我上班路上要花多久？"),
    ("我小时候学过五年书法。", "我童年练过什么传统艺术？"),
    ("我舅舅在老家开了一个养鸡场。", "我母亲的兄弟是做什么的？"),
    ("我喜欢冬天，因为可以滑雪。", "我为什么偏爱寒冷的季节？"),
    ("我的笔记本电脑键盘有几个键失灵了。", "我的电脑哪里坏了？"),
    ("我们家每周日晚上一起包饺子。", "我们家有什么周末传统？"),
    ("我最近在读《三体》，已经看到第二部了。", "我现在在看什么书？"),
    ("我和老公打算明年要二胎。", "我们有什么生育计划？"),
)

#: Every pair, English first; ``recall_quality.py`` indexes the memories and asks the queries.
PAIRS: tuple[tuple[str, str], ...] = ENGLISH + CHINESE


def word_overlap(memory: str, query: str) -> float:
    """Share of the query's words (English) or characters (Chinese) that occur in the memory:
    the figure the benchmark reports to show the queries are paraphrases."""
    import re

    def units(text: str) -> set[str]:
        words = {w for w in re.findall(r"[a-z0-9']+", text.lower()) if len(w) > 2}
        chars = {c for c in text if "\u4e00" <= c <= "\u9fff"}
        return words | chars

    asked = units(query)
    if not asked:
        return 0.0
    return len(asked & units(memory)) / len(asked)


__all__ = ["CHINESE", "ENGLISH", "PAIRS", "word_overlap"]
